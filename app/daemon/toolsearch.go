package daemon

import (
	"context"

	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/toolsearch"
)

// toolIndex is the gateway's ToolIndex over app/toolsearch: the gateway
// knows no SQLite, the index knows no gateway.
type toolIndex struct{ ix *toolsearch.Index }

var _ gateway.ToolIndex = toolIndex{}

func (t toolIndex) Replace(ctx context.Context, server string, tools []gateway.IndexedTool) error {
	out := make([]toolsearch.Tool, 0, len(tools))
	for _, it := range tools {
		title := it.Tool.Title
		if title == "" && it.Tool.Annotations != nil {
			title = it.Tool.Annotations.Title
		}
		out = append(out, toolsearch.Tool{Key: it.Name, Name: it.Tool.Name, Title: title,
			Description: it.Tool.Description, InputSchema: it.Tool.InputSchema})
	}
	return t.ix.Replace(ctx, server, out)
}

func (t toolIndex) Remove(ctx context.Context, server string) error { return t.ix.Remove(ctx, server) }

func (t toolIndex) Search(ctx context.Context, query string, limit int, keep func(string) bool) ([]string, error) {
	var keepHit func(toolsearch.Hit) bool
	if keep != nil {
		keepHit = func(h toolsearch.Hit) bool { return keep(h.Key) }
	}
	hits, err := t.ix.SearchFunc(ctx, query, limit, keepHit)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(hits))
	for i, h := range hits {
		names[i] = h.Key
	}
	return names, nil
}
