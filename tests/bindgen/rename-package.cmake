# Copies IN to OUT with the package name FROM replaced by TO: the values
# world again under another package, for a second header of it in the same
# test binary (two headers of one package would define the same names).
#   cmake -DIN=... -DOUT=... -DFROM=... -DTO=... -P rename-package.cmake
file(READ ${IN} text)
string(REPLACE "${FROM}" "${TO}" text "${text}")
file(WRITE ${OUT} "${text}")
