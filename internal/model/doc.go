// Package model is the model providers behind ctx.model: the Provider
// interface a run asks, and the HTTP clients of the two wire formats a
// [models.*] entry can name, OpenAI-compatible chat completions (OpenAI,
// vLLM, Ollama, llama.cpp, LiteLLM) and Anthropic's Messages API. A step
// with a schema gets JSON that conforms to it, or is asked once more with
// the reason, or fails with ErrOutput. The replay provider, which
// answers from a bundle's fixtures, is the runner's: it reads the run.
//
// Stages that ask a model outside a run (the pipeline's synthesis step,
// codify's refinement) use NewProvider with an entry of the
// configuration, without the runner.
package model
