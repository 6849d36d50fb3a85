package approvals

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/toolscan"
)

// What a Policy is given (a server's list, as the go-sdk has it) as the
// Store fingerprints it (Tool), with the scanner's findings.

// fromTools is what the store fingerprints of each listed tool.
func fromTools(tools []*mcp.Tool) []Tool {
	list := make([]Tool, 0, len(tools))
	for _, t := range tools {
		at := Tool{Name: t.Name, Title: t.Title, Description: t.Description}
		if t.InputSchema != nil {
			at.InputSchema = encodeField(t.InputSchema)
		}
		if t.OutputSchema != nil {
			at.OutputSchema = encodeField(t.OutputSchema)
		}
		if t.Annotations != nil {
			at.Annotations = encodeField(t.Annotations)
		}
		list = append(list, at)
	}
	return list
}

// fromPrompts is what the store fingerprints of each listed prompt: its
// arguments stand in the input schema's place.
func fromPrompts(prompts []*mcp.Prompt) []Tool {
	list := make([]Tool, 0, len(prompts))
	for _, p := range prompts {
		at := Tool{Name: p.Name, Title: p.Title, Description: p.Description}
		if len(p.Arguments) > 0 {
			at.InputSchema = encodeField(p.Arguments)
		}
		list = append(list, at)
	}
	return list
}

// fromTemplates is what the store fingerprints of each listed resource
// template, by its URI template; its name and MIME type stand in the
// input schema's place.
func fromTemplates(templates []*mcp.ResourceTemplate) []Tool {
	list := make([]Tool, 0, len(templates))
	for _, t := range templates {
		at := Tool{Name: t.URITemplate, Title: t.Title, Description: t.Description,
			InputSchema: encodeField(map[string]string{"name": t.Name, "mimeType": t.MIMEType})}
		if t.Annotations != nil {
			at.Annotations = encodeField(t.Annotations)
		}
		list = append(list, at)
	}
	return list
}

// encodeField is v as JSON; a field that cannot be encoded is a JSON
// string saying so: it is fingerprinted (and so held when it appears)
// rather than dropped.
func encodeField(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(fmt.Sprintf("%q", "unencodable: "+err.Error()))
	}
	return data
}

// scanTools runs the scanner over server's tools, with others the tool
// names of the other servers, and gives each tool its findings. The store
// decides what the findings hold (Store.Review).
func scanTools(server string, tools []Tool, others []string) []Tool {
	l := toolscan.Listing{Server: server, Tools: make([]toolscan.Tool, 0, len(tools))}
	for _, t := range tools {
		st := toolscan.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}
		if len(t.Annotations) > 0 {
			var ann toolscan.Annotations
			if json.Unmarshal(t.Annotations, &ann) == nil {
				st.Annotations = &ann
			}
		}
		l.Tools = append(l.Tools, st)
	}
	byTool := map[string][]toolscan.Finding{}
	for _, f := range toolscan.Scan(l, others) {
		if f.Kind == "tool" {
			byTool[f.Item] = append(byTool[f.Item], f)
		}
	}
	out := slices.Clone(tools)
	for i := range out {
		out[i].Findings = byTool[out[i].Name]
	}
	return out
}

// scanItems runs the scanner over server's prompts and templates and
// gives each of ps and ts (their Tool forms, in the same order) its
// findings.
func scanItems(server string, prompts []*mcp.Prompt, templates []*mcp.ResourceTemplate, ps, ts []Tool, others []string) ([]Tool, []Tool) {
	l := toolscan.Listing{Server: server}
	for _, p := range prompts {
		sp := toolscan.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
		for _, a := range p.Arguments {
			sp.Arguments = append(sp.Arguments, toolscan.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description})
		}
		l.Prompts = append(l.Prompts, sp)
	}
	for _, t := range templates {
		l.Templates = append(l.Templates, toolscan.Template{Name: t.Name, Title: t.Title, Description: t.Description,
			URITemplate: t.URITemplate, MIMEType: t.MIMEType})
	}
	byItem := map[string][]toolscan.Finding{}
	for _, f := range toolscan.Scan(l, others) {
		byItem[f.Kind+"\x00"+f.Item] = append(byItem[f.Kind+"\x00"+f.Item], f)
	}
	ps, ts = slices.Clone(ps), slices.Clone(ts)
	for i := range ps {
		ps[i].Findings = byItem["prompt\x00"+prompts[i].Name]
	}
	for i := range ts {
		// The scanner names a template by its name, the store by its URI
		// template.
		ts[i].Findings = byItem["template\x00"+templates[i].Name]
	}
	return ps, ts
}
