// The higher anchor of issue 23 goal 1: Ajv (JSON Schema 2020-12, compiled to JavaScript),
// schema only, every file named on the command line validated in one Node process.
// Usage: node bench/ajv_validate.js SCHEMA FILE...  (AJV_NODE_MODULES: where ajv is)
"use strict";
const fs = require("fs");
const path = require("path");
const where = process.env.AJV_NODE_MODULES || "node_modules";
const Ajv2020 = require(path.resolve(where, "ajv", "dist", "2020"));
const schema = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
let invalid = 0;
const files = process.argv.slice(3);
for (const f of files) {
  if (!validate(JSON.parse(fs.readFileSync(f, "utf8")))) invalid++;
}
console.log(`${files.length} files, ${invalid} invalid`);
process.exitCode = invalid ? 1 : 0;
