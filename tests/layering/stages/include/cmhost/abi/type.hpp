// a type descriptor
