// Validates an OpenAPI 3.0 document (a file named on the command line)
// against the specification's schema and its rules ($refs resolve,
// operation ids unique, path parameters declared). Exit 0 when valid.
const SwaggerParser = require("@apidevtools/swagger-parser");

SwaggerParser.validate(process.argv[2])
  .then((api) => {
    console.log("valid: %s %s", api.info.title, api.openapi);
  })
  .catch((err) => {
    console.error(err.message);
    process.exit(1);
  });
