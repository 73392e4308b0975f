import { getEnvironment } from "wasi:cli/environment@0.2.12";

export const run = {
  run() {
    const env = Object.fromEntries(getEnvironment());
    console.log(`Hello from JavaScript, ${env.NAME ?? "nobody"}!`);
  },
};
