// validate.mjs: checks an OpenAPI document (argv[2]) against the OpenAPI
// 3.1 schema with @seriousme/openapi-schema-validator; exits 1 naming the
// errors. Run by tests/e2e/serve_openapi.sh.
import { Validator } from "@seriousme/openapi-schema-validator";
const validator = new Validator();
const res = await validator.validate(process.argv[2]);
if (!res.valid) {
  console.log(JSON.stringify(res.errors, null, 1).slice(0, 2000));
  process.exit(1);
}
console.log(`valid OpenAPI ${validator.version}`);
