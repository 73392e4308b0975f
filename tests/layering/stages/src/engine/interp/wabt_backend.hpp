// the interpreter
