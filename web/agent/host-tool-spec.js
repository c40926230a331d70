// What a host tool's schema must be for the agent to carry its calls, checked when the page
// registers the tool, so a mistake throws there, naming the parameter, instead of failing a later
// turn. The agent worker checks the same rule again (py/botpsy_agent/tooling.py
// `_check_parameter_names`): a parameter name is written into the prompt and into the call format
// (`<parameter=NAME>`), so it may hold letters (any script), digits, "_", ".", "-" and "$", and
// nothing that could close a tag or open another.
const PARAMETER_NAME = /^(?!\p{Nd})[\p{L}\p{N}_$][\p{L}\p{N}_.$-]{0,127}$/u;

const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

/** Throws a TypeError naming what is wrong with a host tool's `parameters` schema. */
export function checkHostToolParameters(toolName, parameters) {
  if (!isObject(parameters) || (parameters.type ?? "object") !== "object") {
    throw new TypeError(`tool '${toolName}': parameters must be a JSON schema of type object`);
  }
  const properties = parameters.properties ?? {};
  const required = parameters.required ?? [];
  if (!isObject(properties)) {
    throw new TypeError(`tool '${toolName}': 'properties' must be an object of parameter schemas`);
  }
  for (const [key, schema] of Object.entries(properties)) {
    if (!PARAMETER_NAME.test(key)) {
      throw new TypeError(`tool '${toolName}': parameter name ${JSON.stringify(key)} must be letters, digits, ` +
        "'_', '.', '-' or '$' (at most 128, not starting with a digit, '.' or '-')");
    }
    if (!isObject(schema)) throw new TypeError(`tool '${toolName}': the schema of parameter '${key}' must be an object`);
  }
  if (!Array.isArray(required) || required.some((key) => !Object.hasOwn(properties, key))) {
    throw new TypeError(`tool '${toolName}': 'required' must list parameter names from 'properties', ` +
      `got ${JSON.stringify(required)}`);
  }
}
