(component)
;x
