package price

// The sources the table was read from, on the day Checked says.
const (
	// anthropicPricing is Anthropic's pricing page: base input, 5-minute
	// cache writes, cache hits and output per model.
	anthropicPricing = "https://platform.claude.com/docs/en/about-claude/pricing"
	// anthropicPricingOld is the same page as it listed the 4.0 and 3.x
	// models (docs.anthropic.com).
	anthropicPricingOld = "https://docs.anthropic.com/en/docs/about-claude/pricing"
	// claude45Third gives Sonnet 4.5 and 4.6 and Haiku 4.5 input and
	// output; their cache prices follow Anthropic's published multipliers
	// (a 5-minute cache write 1.25 times the input price, a cache hit 0.1
	// times), which the vendor's page states for every model.
	claude45Third = "https://deploybase.ai/articles/claude-api-pricing (third party, March 2026); cache prices by Anthropic's multipliers"
	// gpt5Codex is OpenAI's model page of gpt-5-codex, which also lists
	// GPT-5's input price.
	gpt5Codex = "https://developers.openai.com/api/docs/models/gpt-5-codex"
	// copilotTable is GitHub's table of the per-token prices of the
	// models Copilot serves, copied from the vendors.
	copilotTable = "https://github.com/github/docs data/tables/copilot/models-and-pricing.yml (third party)"
	// openaiSnapshot is a client library's table copied from
	// platform.openai.com/docs/pricing on 2025-06-03.
	openaiSnapshot = "https://hex.pm/packages/openai_responses lib/responses/pricing.ex, from platform.openai.com/docs/pricing 2025-06-03 (third party)"
	// gpt54Third: three third-party tables agree on GPT-5.4.
	gpt54Third = "https://www.getmaxim.ai/bifrost/model-library/compare/openai/gpt-5.4, docs.rs adk-model openai/pricing.rs (third party)"
	// o4MiniThird gives o4-mini with its cached-input price.
	o4MiniThird = "https://www.helicone.ai/model/o4-mini (third party)"
	// geminiThird gives the Gemini 2.5 prices for prompts up to 200,000
	// tokens and the context-cache discount (90 %), from Google's page.
	geminiThird = "https://deploybase.ai/articles/gemini-api-pricing (third party, from ai.google.dev/gemini-api/docs/pricing, March 2026)"
)

// builtin is the price table. Each entry is one family (see Lookup for
// how a model id with a date is matched). Models not here are unpriced:
// o3 (the stored sources disagree between its launch price and a later
// cut), gpt-5.5 and later, and Claude and Gemini models newer than the
// entries below; a project prices them in crystallize.toml.
//
// CacheWrite of OpenAI and Google models is their input price: they do
// not charge for writing the cache, and their logs do not report it.
var builtin = []Entry{
	// Anthropic.
	{Model: "claude-opus-4-8", Price: Price{Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25}, Source: anthropicPricing, Confirmed: true},
	{Model: "claude-opus-4-7", Price: Price{Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25}, Source: anthropicPricing, Confirmed: true},
	{Model: "claude-opus-4-6", Price: Price{Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25}, Source: anthropicPricing, Confirmed: true},
	{Model: "claude-opus-4-5", Price: Price{Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25}, Source: anthropicPricing, Confirmed: true},
	{Model: "claude-opus-4-1", Price: Price{Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75}, Source: anthropicPricing, Confirmed: true},
	{Model: "claude-opus-4-0", Price: Price{Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75}, Source: anthropicPricingOld, Confirmed: true},
	{Model: "claude-opus-4", Price: Price{Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75}, Source: anthropicPricingOld, Confirmed: true},
	{Model: "claude-sonnet-4-6", Price: Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}, Source: claude45Third},
	{Model: "claude-sonnet-4-5", Price: Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}, Source: claude45Third},
	{Model: "claude-sonnet-4-0", Price: Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}, Source: anthropicPricingOld, Confirmed: true},
	{Model: "claude-sonnet-4", Price: Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}, Source: anthropicPricingOld, Confirmed: true},
	{Model: "claude-haiku-4-5", Price: Price{Input: 1, Output: 5, CacheRead: 0.10, CacheWrite: 1.25}, Source: claude45Third},
	{Model: "claude-3-7-sonnet", Price: Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}, Source: anthropicPricingOld, Confirmed: true},
	{Model: "claude-3-5-sonnet", Price: Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}, Source: anthropicPricingOld, Confirmed: true},
	{Model: "claude-3-5-haiku", Price: Price{Input: 0.80, Output: 4, CacheRead: 0.08, CacheWrite: 1}, Source: anthropicPricingOld, Confirmed: true},
	{Model: "claude-3-opus", Price: Price{Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75}, Source: anthropicPricingOld, Confirmed: true},
	{Model: "claude-3-haiku", Price: Price{Input: 0.25, Output: 1.25, CacheRead: 0.03, CacheWrite: 0.30}, Source: anthropicPricingOld, Confirmed: true},

	// OpenAI.
	{Model: "gpt-5-codex", Price: Price{Input: 1.25, Output: 10, CacheRead: 0.125, CacheWrite: 1.25}, Source: gpt5Codex, Confirmed: true},
	{Model: "gpt-5", Price: Price{Input: 1.25, Output: 10, CacheRead: 0.125, CacheWrite: 1.25}, Source: gpt5Codex + " (input); output and cached input as gpt-5-codex, " + copilotTable},
	{Model: "gpt-5-mini", Price: Price{Input: 0.25, Output: 2, CacheRead: 0.025, CacheWrite: 0.25}, Source: copilotTable},
	{Model: "gpt-5.1", Price: Price{Input: 1.25, Output: 10, CacheRead: 0.125, CacheWrite: 1.25}, Source: copilotTable},
	{Model: "gpt-5.2", Price: Price{Input: 1.75, Output: 14, CacheRead: 0.175, CacheWrite: 1.75}, Source: copilotTable},
	{Model: "gpt-5.2-codex", Price: Price{Input: 1.75, Output: 14, CacheRead: 0.175, CacheWrite: 1.75}, Source: copilotTable},
	{Model: "gpt-5.3-codex", Price: Price{Input: 1.75, Output: 14, CacheRead: 0.175, CacheWrite: 1.75}, Source: copilotTable},
	{Model: "gpt-5.4", Price: Price{Input: 2.50, Output: 15, CacheRead: 0.25, CacheWrite: 2.50}, Source: gpt54Third},
	{Model: "gpt-4.1", Price: Price{Input: 2, Output: 8, CacheRead: 0.50, CacheWrite: 2}, Source: copilotTable + "; " + openaiSnapshot},
	{Model: "gpt-4.1-mini", Price: Price{Input: 0.40, Output: 1.60, CacheRead: 0.10, CacheWrite: 0.40}, Source: openaiSnapshot},
	{Model: "gpt-4.1-nano", Price: Price{Input: 0.10, Output: 0.40, CacheRead: 0.025, CacheWrite: 0.10}, Source: openaiSnapshot},
	{Model: "gpt-4o", Price: Price{Input: 2.50, Output: 10, CacheRead: 1.25, CacheWrite: 2.50}, Source: openaiSnapshot},
	{Model: "gpt-4o-mini", Price: Price{Input: 0.15, Output: 0.60, CacheRead: 0.075, CacheWrite: 0.15}, Source: openaiSnapshot},
	{Model: "o4-mini", Price: Price{Input: 1.10, Output: 4.40, CacheRead: 0.275, CacheWrite: 1.10}, Source: o4MiniThird},

	// Google, for prompts up to 200,000 tokens (longer prompts cost more
	// and are not told apart here).
	{Model: "gemini-2.5-pro", Price: Price{Input: 1.25, Output: 10, CacheRead: 0.125, CacheWrite: 1.25}, Source: geminiThird},
	{Model: "gemini-2.5-flash", Price: Price{Input: 0.30, Output: 2.50, CacheRead: 0.03, CacheWrite: 0.30}, Source: geminiThird},
	{Model: "gemini-2.5-flash-lite", Price: Price{Input: 0.10, Output: 0.40, CacheRead: 0.01, CacheWrite: 0.10}, Source: geminiThird},
}
