// A WASI command as toolchains make them: C with wasi-libc, compiled by
// clang, made a component with the preview1 command adapter jco ships
// (tests/wasi/make-command.mjs). `cmhost run --dir HOST::/data hello.wasm NAME`
// greets NAME, writes a file into the preopened directory and lists it.
#include <dirent.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  const char* name = argc > 1 ? argv[1] : "world";
  printf("Hello, %s, from a WASI component!\n", name);
  FILE* f = fopen("/data/greeting.txt", "w");
  if (!f) {
    perror("/data/greeting.txt");
    return 1;
  }
  fprintf(f, "Hello, %s!\n", name);
  fclose(f);
  DIR* dir = opendir("/data");
  if (!dir) {
    perror("/data");
    return 1;
  }
  printf("/data holds:");
  struct dirent* e;
  while ((e = readdir(dir)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) printf(" %s", e->d_name);
  printf("\n");
  closedir(dir);
  return 0;
}
