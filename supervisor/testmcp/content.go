package testmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// envContent turns on the content tools (Options.Content).
const envContent = "SWITCHBOARD_TESTMCP_CONTENT"

// ImageSize is the side, in pixels, of the image tool's picture.
const ImageSize = 32

// The inputs of the form tool: one of every kind a JSON Schema form has.
type formArgs struct {
	Text    string         `json:"text" jsonschema:"any text"`
	Count   int            `json:"count,omitempty" jsonschema:"a whole number"`
	Ratio   float64        `json:"ratio,omitempty" jsonschema:"a number"`
	Loud    bool           `json:"loud,omitempty" jsonschema:"shout the text"`
	Color   string         `json:"color,omitempty" jsonschema:"one of red, green, blue"`
	Tags    []string       `json:"tags,omitempty" jsonschema:"a list of words"`
	Options map[string]any `json:"options,omitempty" jsonschema:"any JSON object"`
	APIKey  string         `json:"apiKey,omitempty" jsonschema:"a secret, which the history redacts"`
}

type imageArgs struct {
	Caption string `json:"caption,omitempty" jsonschema:"text sent beside the image"`
}

type failArgs struct {
	Message string `json:"message,omitempty" jsonschema:"the error the tool reports"`
}

// addContentTools gives the server tools whose results carry every kind
// of content a client shows: image (a PNG and a caption), fail (a tool
// error), link (a resource link and structured content), and form, whose
// input schema has a field of every JSON Schema kind (string, integer,
// number, boolean, enum, array, object) and which replies with what it
// was given, as text and as structured content.
func addContentTools(s *mcp.Server) {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(bool)} // they change nothing
	mcp.AddTool(s, &mcp.Tool{Name: "image", Annotations: readOnly, Description: "Reply with a small PNG picture and a caption."},
		func(_ context.Context, _ *mcp.CallToolRequest, in imageArgs) (*mcp.CallToolResult, any, error) {
			caption := in.Caption
			if caption == "" {
				caption = "a gradient"
			}
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: caption},
				&mcp.ImageContent{Data: gradientPNG(), MIMEType: "image/png"},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Annotations: readOnly, Description: "Reply with a tool error (isError) carrying message."},
		func(_ context.Context, _ *mcp.CallToolRequest, in failArgs) (*mcp.CallToolResult, any, error) {
			msg := in.Message
			if msg == "" {
				msg = "the tool failed on purpose"
			}
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "link", Annotations: readOnly, Description: "Reply with a resource link to test://static/hello and structured content."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.ResourceLink{URI: uriHello, Name: "hello", Description: "A greeting from the server.", MIMEType: "text/plain"},
			}}, map[string]any{"uri": uriHello, "kind": "link"}, nil
		})
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"text":    map[string]any{"type": "string", "description": "any text"},
			"count":   map[string]any{"type": "integer", "description": "a whole number", "minimum": 0},
			"ratio":   map[string]any{"type": "number", "description": "a number"},
			"loud":    map[string]any{"type": "boolean", "description": "shout the text"},
			"color":   map[string]any{"type": "string", "enum": []any{"red", "green", "blue"}, "description": "one of red, green, blue"},
			"tags":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "a list of words"},
			"options": map[string]any{"type": "object", "description": "any JSON object"},
			"apiKey":  map[string]any{"type": "string", "description": "a secret, which the history redacts"},
		},
		"required": []any{"text"},
	}
	mcp.AddTool(s, &mcp.Tool{Name: "form", Annotations: readOnly, Description: "Reply with the arguments given, as JSON text and structured content.", InputSchema: schema},
		func(_ context.Context, _ *mcp.CallToolRequest, in formArgs) (*mcp.CallToolResult, formArgs, error) {
			data, err := json.Marshal(in)
			if err != nil {
				return nil, formArgs{}, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}}, in, nil
		})
}

// gradientPNG is a PNG of ImageSize×ImageSize pixels, a gradient from
// blue to orange.
func gradientPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, ImageSize, ImageSize))
	for y := range ImageSize {
		for x := range ImageSize {
			img.Set(x, y, color.RGBA{R: uint8(x * 255 / ImageSize), G: uint8(y * 128 / ImageSize), B: uint8(255 - x*255/ImageSize), A: 255})
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img) // writing to memory does not fail
	return buf.Bytes()
}
