#!/usr/bin/env node
// A second bin, so that the installer has to pick the right one.
process.stderr.write("this is the helper, not the server\n");
process.exit(3);
