#!/usr/bin/env node
// The `acp` command. Built sources live in ../dist (built by `npm install` through `prepare`).
import { run } from "../dist/main.js";
import { endOnClosedPipe } from "../dist/closed-pipe.js";

endOnClosedPipe(process);
process.exitCode = await run(process.argv.slice(2));
