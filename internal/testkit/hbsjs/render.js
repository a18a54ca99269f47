// render.js renders handlebars templates with handlebars.js, the reference
// for postroom's templates, for the differential tests: one JSON object
// {"template": "...", "data": {...}, "partials": {"name": "..."}} (partials
// optional, passed as the render's options.partials) per line on stdin,
// or {"template": "...", "globals": {...}, "params": {...}} to render with
// Object.assign({}, globals, params), the root context a call's
// global_params and a recipient's params make; one JSON object
// {"out": "..."} or {"error": "..."} per line on stdout, in order.
// handlebars.js is compiled with its default options (no compat, no
// strict); its own logging ({{log}}, prototype-access warnings) is
// silenced so that stdout carries only the replies.
'use strict';
const path = require('path');
const readline = require('readline');
const Handlebars = require(path.join(__dirname, 'node_modules', 'handlebars'));

const hbs = Handlebars.create();
hbs.log = function () {};
hbs.logger.log = function () {};
console.log = console.error;

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  let reply;
  try {
    const req = JSON.parse(line);
    const data = req.merge ? Object.assign({}, req.globals, req.params) : req.data;
    reply = { out: hbs.compile(req.template)(data, { partials: req.partials || {} }) };
  } catch (e) {
    reply = { error: String((e && e.message) || e) };
  }
  process.stdout.write(JSON.stringify(reply) + '\n');
});
