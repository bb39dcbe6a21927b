// Package runconfig is the project configuration, crystallize.toml: what
// binds each tool name (a command template, an HTTP request, an MCP
// server's tool, a confined file built-in), the capabilities granted, the
// [models.*] entries, the secrets file, the fallback policy, approvals,
// workers, Temporal timings, the [normalize] extension and the [prices]
// table. LoadConfig reads and checks a file, reporting every problem as
// "file: path: message"; it refuses a file inside a bundle, whose
// configuration would rebind what the reviewer approved.
//
// The configuration is read by stages that never run a workflow (the
// pipeline's synthesis model, codify), so it imports none of the
// packages that do: the runner, the tool executors and the model
// providers all read it.
package runconfig
