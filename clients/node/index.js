'use strict';
// sluice-client: the Node.js client of the sluice job queue, written from
// docs/protocol.md with Node's standard library only.
const errors = require('./lib/errors');
const { Client } = require('./lib/client');
const { Router } = require('./lib/router');
const { Worker, Fatal } = require('./lib/worker');

const { KEYS_PENDING, KEYS_HELD } = require('./lib/move');

module.exports = { Client, Router, Worker, Fatal, ...errors,
  MOVE_KEYS_PENDING: KEYS_PENDING, MOVE_KEYS_HELD: KEYS_HELD,
  version: require('./package.json').version };
