'use strict';
// sluice-client: the Node.js client of the sluice job queue, written from
// docs/protocol.md with Node's standard library only.
const errors = require('./lib/errors');
const { Client } = require('./lib/client');
const { Router } = require('./lib/router');
const { Worker, Fatal } = require('./lib/worker');

module.exports = { Client, Router, Worker, Fatal, ...errors,
  version: require('./package.json').version };
