package tui

import (
	"strings"

	"github.com/agent-mcp/agent-mcp/orchestrator/llm"
)

// price is a model's list price in US dollars per million tokens.
type price struct {
	in, out, cacheRead, cacheWrite float64
}

// prices is the table /cost estimates with, by model name prefix (the
// longest matching prefix wins); a model not in it shows tokens only.
// List prices as published by the providers; update here.
var prices = map[string]price{
	"claude-opus-4":     {15, 75, 1.5, 18.75},
	"claude-sonnet-4":   {3, 15, 0.3, 3.75},
	"claude-3-7-sonnet": {3, 15, 0.3, 3.75},
	"claude-3-5-sonnet": {3, 15, 0.3, 3.75},
	"claude-haiku-4":    {1, 5, 0.1, 1.25},
	"claude-3-5-haiku":  {0.8, 4, 0.08, 1},
	"gpt-4.1-nano":      {0.1, 0.4, 0.025, 0},
	"gpt-4.1-mini":      {0.4, 1.6, 0.1, 0},
	"gpt-4.1":           {2, 8, 0.5, 0},
	"gpt-4o-mini":       {0.15, 0.6, 0.075, 0},
	"gpt-4o":            {2.5, 10, 1.25, 0},
	"gpt-5-mini":        {0.25, 2, 0.025, 0},
	"gpt-5":             {1.25, 10, 0.125, 0},
	"o3":                {2, 8, 0.5, 0},
	"o4-mini":           {1.1, 4.4, 0.275, 0},
}

// priceOf finds the price of model ("provider/name" or a bare name).
func priceOf(model string) (price, bool) {
	if _, name, ok := strings.Cut(model, "/"); ok {
		model = name
	}
	model = strings.ToLower(model)
	best, found := "", false
	for prefix := range prices {
		if strings.HasPrefix(model, prefix) && len(prefix) > len(best) {
			best, found = prefix, true
		}
	}
	return prices[best], found
}

// EstimateCost is the list price in US dollars of usage u of model (by
// the table /cost uses), and whether the table knows the model.
func EstimateCost(model string, u llm.Usage) (float64, bool) {
	p, ok := priceOf(model)
	if !ok {
		return 0, false
	}
	return (float64(u.InputTokens)*p.in + float64(u.OutputTokens)*p.out +
		float64(u.CacheReadTokens)*p.cacheRead + float64(u.CacheWriteTokens)*p.cacheWrite) / 1e6, true
}
