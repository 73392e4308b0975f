// The start-up benchmark's guest: a C hello world, made a command component
// with jco's preview1 adapter.
#include <stdio.h>

int main(void) {
  puts("Hello, world!");
  return 0;
}
