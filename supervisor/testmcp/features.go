package testmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds the features beyond the process-level tools of server.go:
// prompts, resources, subscriptions, completion, logging, list changes and
// the server→client requests (sampling, elicitation, roots). See the package
// comment for their exact behaviour.

// Resource and template URIs.
const (
	uriHello        = "test://static/hello"
	uriData         = "test://static/data.json"
	itemTemplate    = "test://items/{id}"
	itemPrefix      = "test://items/"
	loggerName      = "testmcp"
	mrtrEraVersion  = "2026-07-28" // first protocol version with multi round-trip requests (SEP-2322)
	maxBigKiB       = 64 << 10     // the big tool's limit: 64 MiB
	maxToolNameSize = 128
)

// URIHangSubscribe is a URI whose resources/subscribe the server never
// answers (until the request is cancelled).
const URIHangSubscribe = "test://subscribe/hang"

// Completion candidates.
var (
	greetNames = []string{"alice", "albert", "bob"}
	itemIDs    = []string{"1", "2", "10"}
)

// Keys of the multi-round-trip input requests, also used as request states.
const (
	inputSample = "sample"
	inputElicit = "elicit"
	inputRoots  = "roots"
)

// logLevels are the MCP logging levels, lowest first.
//
//lint:ignore SA1019 the test exercises logging, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// state is the mutable part of one server process.
type state struct {
	name   string
	server *mcp.Server

	mu    sync.Mutex
	tools map[string]bool // names of the tools currently registered
	subs  map[string]bool // resource URIs the client has subscribed to
}

func newState(name string) *state {
	return &state{name: name, tools: make(map[string]bool), subs: make(map[string]bool)}
}

// serverOptions returns the options that enable subscriptions, completion and instructions.
func (st *state) serverOptions() *mcp.ServerOptions {
	return &mcp.ServerOptions{
		Instructions: fmt.Sprintf("Test server %s: echo, sleep, crash, hang, freeze, junk, spawn and more tools, prompts and resources for supervisor and gateway tests.", st.name),
		SubscribeHandler: func(ctx context.Context, req *mcp.SubscribeRequest) error {
			if req.Params.URI == URIHangSubscribe {
				<-ctx.Done() // a server slow to answer a subscription
				return ctx.Err()
			}
			st.mu.Lock()
			defer st.mu.Unlock()
			st.subs[req.Params.URI] = true
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			st.mu.Lock()
			defer st.mu.Unlock()
			delete(st.subs, req.Params.URI)
			return nil
		},
		CompletionHandler: complete,
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			if os.Getenv(EnvRootsAtStart) == "1" {
				go rootsAtStart(req.Session)
			}
		},
	}
}

// EnvRootsAtStart, set to "1", makes the server ask its client for roots
// (roots/list) once initialized, outside of any call, as
// server-filesystem does, and write the answer to stderr: "testmcp: roots
// at start: <uri>,<uri>" or "testmcp: roots at start failed: <error>".
const EnvRootsAtStart = "SWITCHBOARD_TESTMCP_ROOTS_AT_START"

func rootsAtStart(ss *mcp.ServerSession) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	//lint:ignore SA1019 the test exercises roots, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
	res, err := ss.ListRoots(ctx, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testmcp: roots at start failed: %v\n", err)
		return
	}
	uris := make([]string, 0, len(res.Roots))
	for _, r := range res.Roots {
		uris = append(uris, r.URI)
	}
	fmt.Fprintf(os.Stderr, "testmcp: roots at start: %s\n", strings.Join(uris, ","))
}

// addTool registers a tool and remembers its name (for add_tool and remove_tool).
func addTool[In, Out any](st *state, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	mcp.AddTool(st.server, t, h)
	st.mu.Lock()
	st.tools[t.Name] = true
	st.mu.Unlock()
}

// Inputs and outputs of the tools in this file.
type (
	touchArgs struct {
		URI string `json:"uri" jsonschema:"resource URI to report as updated"`
	}
	touchOut struct {
		URI        string `json:"uri"`
		Subscribed bool   `json:"subscribed" jsonschema:"whether the client had subscribed to the URI"`
	}
	logArgs struct {
		Level   string `json:"level" jsonschema:"debug, info, notice, warning, error, critical, alert or emergency"`
		Message string `json:"message" jsonschema:"the log message (the notification's data)"`
	}
	nameArgs struct {
		Name string `json:"name" jsonschema:"tool name"`
	}
	sampleArgs struct {
		Prompt string `json:"prompt" jsonschema:"text of the user message sent for sampling"`
	}
	elicitArgs struct {
		Message string         `json:"message" jsonschema:"message shown to the user"`
		Schema  map[string]any `json:"schema,omitempty" jsonschema:"the requested schema, instead of one string property answer"`
		URL     string         `json:"url,omitempty" jsonschema:"ask in url mode, to open this URL, instead of with a form"`
	}
	bigArgs struct {
		KB int `json:"kb" jsonschema:"size of the returned text in KiB"`
	}
	// elicitOut is the elicit tool's reply, as JSON text.
	elicitOut struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content,omitempty"`
	}
)

// GreetDescription is the greet prompt's description unless Options say
// otherwise.
const GreetDescription = "Greet someone by name."

// addGreet adds the greet prompt with description desc, or replaces it.
func addGreet(s *mcp.Server, desc string) {
	s.AddPrompt(&mcp.Prompt{
		Name:        "greet",
		Description: desc,
		Arguments:   []*mcp.PromptArgument{{Name: "name", Description: "who to greet", Required: true}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		name := req.Params.Arguments["name"]
		if name == "" {
			return nil, missingArgument("name")
		}
		return promptResult("A greeting", fmt.Sprintf("Hello, %s!", name)), nil
	})
}

// addFeatures registers the prompts, resources and the tools of this file.
func (st *state) addFeatures() {
	s := st.server
	st.addFlood()

	addGreet(s, GreetDescription)

	s.AddPrompt(&mcp.Prompt{
		Name:        "summarize",
		Description: "Ask for a summary of a text.",
		Arguments: []*mcp.PromptArgument{
			{Name: "text", Description: "the text to summarize", Required: true},
			{Name: "style", Description: "style of the summary, e.g. terse"},
		},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		text := req.Params.Arguments["text"]
		if text == "" {
			return nil, missingArgument("text")
		}
		return promptResult("A summary request", summarizeText(text, req.Params.Arguments["style"])), nil
	})

	s.AddResource(&mcp.Resource{URI: uriHello, Name: "hello", Description: "A greeting from the server.", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return resourceText(req.Params.URI, "text/plain", "hello from "+st.name), nil
		})

	s.AddResource(&mcp.Resource{URI: uriData, Name: "data", Description: "A small JSON document.", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			data, err := json.Marshal(struct {
				Server string   `json:"server"`
				Items  []string `json:"items"`
			}{st.name, itemIDs})
			if err != nil {
				return nil, err
			}
			return resourceText(req.Params.URI, "application/json", string(data)), nil
		})

	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: itemTemplate, Name: "item", Description: "An item by id.", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id, ok := strings.CutPrefix(req.Params.URI, itemPrefix)
			if !ok || id == "" || strings.Contains(id, "/") {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			return resourceText(req.Params.URI, "text/plain", "item "+id), nil
		})

	addTool(st, &mcp.Tool{Name: "touch", Description: "Send notifications/resources/updated for uri to the clients subscribed to it."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in touchArgs) (*mcp.CallToolResult, touchOut, error) {
			st.mu.Lock()
			subscribed := st.subs[in.URI]
			st.mu.Unlock()
			if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: in.URI}); err != nil {
				return nil, touchOut{}, err
			}
			return text("touched " + in.URI), touchOut{URI: in.URI, Subscribed: subscribed}, nil
		})

	addTool(st, &mcp.Tool{Name: "log", Description: "Send a notifications/message log message (logger \"testmcp\") to the client."},
		func(ctx context.Context, req *mcp.CallToolRequest, in logArgs) (*mcp.CallToolResult, any, error) {
			//lint:ignore SA1019 the test exercises logging, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
			level := mcp.LoggingLevel(in.Level)
			if !slices.Contains(logLevels, level) {
				return nil, nil, fmt.Errorf("unknown log level %q", in.Level)
			}
			//lint:ignore SA1019 the test exercises logging, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
			err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: loggerName, Data: in.Message})
			if err != nil {
				return nil, nil, fmt.Errorf("log: %w", err)
			}
			return text("ok"), nil, nil
		})

	addTool(st, &mcp.Tool{Name: "add_tool", Description: "Add a tool with the given name, which replies \"added <name>\"; the server then sends notifications/tools/list_changed."},
		func(_ context.Context, _ *mcp.CallToolRequest, in nameArgs) (*mcp.CallToolResult, any, error) {
			if err := st.addNamedTool(in.Name); err != nil {
				return nil, nil, err
			}
			return text("added " + in.Name), nil, nil
		})

	addTool(st, &mcp.Tool{Name: "remove_tool", Description: "Remove the named tool (any tool, built-in or added); the server then sends notifications/tools/list_changed."},
		func(_ context.Context, _ *mcp.CallToolRequest, in nameArgs) (*mcp.CallToolResult, any, error) {
			st.mu.Lock()
			defer st.mu.Unlock()
			if !st.tools[in.Name] {
				return nil, nil, fmt.Errorf("no tool %q", in.Name)
			}
			s.RemoveTools(in.Name)
			delete(st.tools, in.Name)
			return text("removed " + in.Name), nil, nil
		})

	addTool(st, &mcp.Tool{Name: "sample", Description: "Ask the client to sample an LLM (sampling/createMessage) with prompt as the user message; reply with the text it returns."},
		func(ctx context.Context, req *mcp.CallToolRequest, in sampleArgs) (*mcp.CallToolResult, any, error) {
			res, err := sampleTool(ctx, req, in)
			return res, nil, err
		})

	addTool(st, &mcp.Tool{Name: "elicit", Description: "Ask the user (elicitation/create) for a string \"answer\" (or what schema asks, or to open url); reply with the action and content as JSON."},
		func(ctx context.Context, req *mcp.CallToolRequest, in elicitArgs) (*mcp.CallToolResult, any, error) {
			res, err := elicitTool(ctx, req, in)
			return res, nil, err
		})

	addTool(st, &mcp.Tool{Name: "roots", Description: "Ask the client for its roots (roots/list); reply with their URIs joined by commas."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			res, err := rootsTool(ctx, req)
			return res, nil, err
		})

	addTool(st, &mcp.Tool{Name: "big", Description: "Reply with a text of kb KiB (for benchmarks)."},
		func(_ context.Context, _ *mcp.CallToolRequest, in bigArgs) (*mcp.CallToolResult, any, error) {
			if in.KB < 0 || in.KB > maxBigKiB {
				return nil, nil, fmt.Errorf("kb must be between 0 and %d", maxBigKiB)
			}
			return text(bigText(in.KB)), nil, nil
		})
}

// missingArgument is the prompts/get error for a missing required argument.
func missingArgument(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("missing required argument %q", name)}
}

func promptResult(desc, msg string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{
		Description: desc,
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: msg}}},
	}
}

// summarizeText is the summarize prompt's message.
func summarizeText(text, style string) string {
	if style == "" {
		return "Summarize the following text:\n\n" + text
	}
	return fmt.Sprintf("Summarize the following text in a %s style:\n\n%s", style, text)
}

func resourceText(uri, mimeType, s string) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeType, Text: s}}}
}

// bigText returns kb KiB of text: lines of 63 characters and a newline.
func bigText(kb int) string {
	const line = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.\n"
	return strings.Repeat(line, kb*1024/len(line))
}

// complete is the completion/complete handler.
func complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	var candidates []string
	ref, arg := req.Params.Ref, req.Params.Argument
	switch {
	case ref.Type == "ref/prompt" && ref.Name == "greet" && arg.Name == "name":
		candidates = greetNames
	case ref.Type == "ref/resource" && ref.URI == itemTemplate && arg.Name == "id":
		candidates = itemIDs
	}
	values := []string{} // never JSON null
	for _, c := range candidates {
		if strings.HasPrefix(c, arg.Value) {
			values = append(values, c)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}

// addNamedTool adds a tool called name that replies "added <name>" (see
// add_tool and Options.ExtraTools).
func (st *state) addNamedTool(name string) error {
	if err := checkToolName(name); err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.tools[name] {
		return fmt.Errorf("tool %q already exists", name)
	}
	reply := "added " + name
	mcp.AddTool(st.server, &mcp.Tool{Name: name, Description: "A tool added by add_tool or Options.ExtraTools."},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			return text(reply), nil, nil
		})
	st.tools[name] = true
	return nil
}

// checkToolName applies the MCP tool-name rules (the SDK only logs a violation).
func checkToolName(name string) error {
	if name == "" || len(name) > maxToolNameSize {
		return fmt.Errorf("invalid tool name %q: must have 1 to %d characters", name, maxToolNameSize)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("invalid tool name %q: only letters, digits, '_', '-' and '.' are allowed", name)
		}
	}
	return nil
}

// Server→client requests.
//
// On a session that negotiated a protocol older than 2026-07-28 (the
// initialize handshake) the tools send the request to the client themselves,
// with ServerSession.CreateMessage, Elicit or ListRoots.
//
// From 2026-07-28 on, the SDK refuses those calls (server-initiated requests
// are forbidden; ServerSession.assertServerInitiatedRequestAllowed) and the
// tools use multi round-trip requests (SEP-2322) instead: the first call
// returns an input-required result carrying the request in InputRequests; the
// client fulfils it (the go-sdk client does so automatically with its
// handlers) and calls the tool again with the answer in InputResponses, which
// the tool turns into its reply.

// mrtrSession reports whether the tool call must use multi round-trip
// requests. It makes the same decision as the SDK: the session's protocol
// version, the latest (2026-07-28) when the session has none yet.
func mrtrSession(req *mcp.CallToolRequest) bool {
	ip := req.Session.InitializeParams()
	return ip == nil || ip.ProtocolVersion >= mrtrEraVersion
}

// inputResponse returns the client's answer to the input request key, or
// nil when this is the first round (no answers).
func inputResponse(req *mcp.CallToolRequest, key string) (mcp.InputResponse, error) {
	p := req.Params
	if len(p.InputResponses) == 0 {
		return nil, nil
	}
	if p.RequestState != key {
		return nil, fmt.Errorf("unexpected request state %q", p.RequestState)
	}
	resp, ok := p.InputResponses[key]
	if !ok || resp == nil {
		return nil, fmt.Errorf("no answer to input request %q", key)
	}
	return resp, nil
}

// inputRequired is the first-round result asking the client for input.
func inputRequired(key string, ir mcp.InputRequest) *mcp.CallToolResult {
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{key: ir}, RequestState: key}
}

// askError is the tool error for a failed request to the client: what
// failed, and the JSON-RPC error code when the client (or whoever answered
// for it) sent an error response, so that tests see the code too.
func askError(what string, err error) error {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return fmt.Errorf("%s: %w (JSON-RPC error %d)", what, err, rpc.Code)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// unsupported is the tool error for a client that lacks a capability.
func unsupported(feature string) error {
	return fmt.Errorf("client does not support %s", feature)
}

func sampleTool(ctx context.Context, req *mcp.CallToolRequest, in sampleArgs) (*mcp.CallToolResult, error) {
	//lint:ignore SA1019 the test exercises sampling, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
	params := &mcp.CreateMessageParams{
		//lint:ignore SA1019 the test exercises sampling, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
		Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
		MaxTokens: 100,
	}
	if !mrtrSession(req) {
		//lint:ignore SA1019 the test exercises sampling, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
		res, err := req.Session.CreateMessage(ctx, params)
		if err != nil {
			return nil, askError("sampling", err)
		}
		return sampledText([]mcp.Content{res.Content})
	}
	resp, err := inputResponse(req, inputSample)
	if err != nil {
		return nil, err
	}
	switch r := resp.(type) {
	case nil:
	//lint:ignore SA1019 the test exercises sampling, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
	case *mcp.CreateMessageWithToolsResult:
		return sampledText(r.Content)
	//lint:ignore SA1019 the test exercises sampling, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
	case *mcp.CreateMessageResult:
		return sampledText([]mcp.Content{r.Content})
	default:
		return nil, fmt.Errorf("sampling: unexpected answer %T", resp)
	}
	//lint:ignore SA1019 the test exercises sampling, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
	if caps := req.ClientCapabilities(); caps == nil || caps.Sampling == nil {
		return nil, unsupported("sampling")
	}
	return inputRequired(inputSample, params), nil
}

// sampledText returns the text of a sampling reply.
func sampledText(content []mcp.Content) (*mcp.CallToolResult, error) {
	var parts []string
	for _, c := range content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			return nil, fmt.Errorf("sampling: reply content is %T, not text", c)
		}
		parts = append(parts, tc.Text)
	}
	return text(strings.Join(parts, "\n")), nil
}

func elicitTool(ctx context.Context, req *mcp.CallToolRequest, in elicitArgs) (*mcp.CallToolResult, error) {
	params := &mcp.ElicitParams{
		Message: in.Message,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"answer": map[string]any{"type": "string", "description": "your answer"},
			},
		},
	}
	if in.Schema != nil {
		params.RequestedSchema = in.Schema
	}
	if in.URL != "" {
		params.RequestedSchema, params.URL, params.ElicitationID = nil, in.URL, "elicit-1"
	}
	var res *mcp.ElicitResult
	if !mrtrSession(req) {
		var err error
		if res, err = req.Session.Elicit(ctx, params); err != nil {
			return nil, askError("elicitation", err)
		}
	} else {
		resp, err := inputResponse(req, inputElicit)
		if err != nil {
			return nil, err
		}
		switch r := resp.(type) {
		case nil:
			if caps := req.ClientCapabilities(); caps == nil || caps.Elicitation == nil {
				return nil, unsupported("elicitation")
			}
			return inputRequired(inputElicit, params), nil
		case *mcp.ElicitResult:
			res = r
		default:
			return nil, fmt.Errorf("elicitation: unexpected answer %T", resp)
		}
	}
	data, err := json.Marshal(elicitOut{Action: res.Action, Content: res.Content})
	if err != nil {
		return nil, err
	}
	return text(string(data)), nil
}

func rootsTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	//lint:ignore SA1019 the test exercises roots, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
	var res *mcp.ListRootsResult
	if !mrtrSession(req) {
		var err error
		//lint:ignore SA1019 the test exercises roots, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
		if res, err = req.Session.ListRoots(ctx, nil); err != nil {
			return nil, askError("roots", err)
		}
	} else {
		resp, err := inputResponse(req, inputRoots)
		if err != nil {
			return nil, err
		}
		switch r := resp.(type) {
		case nil:
			//lint:ignore SA1019 the test exercises roots, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
			if caps := req.ClientCapabilities(); caps == nil || caps.RootsV2 == nil {
				return nil, unsupported("roots")
			}
			//lint:ignore SA1019 the test exercises roots, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
			return inputRequired(inputRoots, &mcp.ListRootsParams{}), nil
		//lint:ignore SA1019 the test exercises roots, which the gateway still relays (deprecated by SEP-2577, functional in its deprecation window)
		case *mcp.ListRootsResult:
			res = r
		default:
			return nil, fmt.Errorf("roots: unexpected answer %T", resp)
		}
	}
	uris := make([]string, 0, len(res.Roots))
	for _, r := range res.Roots {
		uris = append(uris, r.URI)
	}
	return text(strings.Join(uris, ",")), nil
}
