package gateway

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the go-sdk path's ServerSession.Elicit, CreateMessage and ListRoots
// do around a request to the client, which askFast sends itself: the same
// checks, conversions and error texts, so that a server cannot tell the
// paths apart. ListRoots does nothing more than send the request.

// checkElicitMode refuses a mode the client did not declare, as
// ServerSession.Elicit does: "url" needs the url capability; "form" is
// refused only to a client that declared url and not form (one that
// declared neither takes forms, as before modes existed). p has its mode.
func checkElicitMode(caps *mcp.ClientCapabilities, p *mcp.ElicitParams) error {
	if caps == nil || caps.Elicitation == nil || p == nil {
		return nil // callerFor refused a client without elicitation
	}
	e := caps.Elicitation
	switch p.Mode {
	case "form":
		if e.Form == nil && e.URL != nil {
			return errors.New(`client does not support "form" elicitation`)
		}
	case "url":
		if e.URL == nil {
			return errors.New(`client does not support "url" elicitation`)
		}
	}
	return nil
}

// checkElicitAnswer checks the content of an accepted answer against the
// requested schema and adds the schema's defaults to it, as
// ServerSession.Elicit does; a declined or cancelled answer passes as it
// is. The schema itself was checked by the gateway's backend client before
// the request reached askCaller (it refuses a form request whose schema is
// not a flat object of primitives, and a url request with a schema).
func checkElicitAnswer(p *mcp.ElicitParams, res *mcp.ElicitResult) error {
	if res.Action != "accept" || res.Content == nil || p == nil || p.RequestedSchema == nil {
		return nil
	}
	data, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return err
	}
	var schema *jsonschema.Schema
	if err := decodeAnswer(data, &schema); err != nil {
		return err
	}
	if schema == nil {
		return nil
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return err
	}
	if err := resolved.Validate(res.Content); err != nil {
		return fmt.Errorf("elicitation result content does not match requested schema: %v", err)
	}
	if err := resolved.ApplyDefaults(&res.Content); err != nil {
		return fmt.Errorf("failed to apply schema defaults to elicitation result: %v", err)
	}
	return nil
}

// singleSampled turns a client's sampling answer into the one-content
// result the server's sampling/createMessage expects, as
// ServerSession.CreateMessage does: more than one content block is an
// error, none is a result without content.
//
//lint:ignore SA1019 the gateway relays sampling between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
func singleSampled(r *mcp.CreateMessageWithToolsResult) (*mcp.CreateMessageResult, error) {
	if len(r.Content) > 1 {
		return nil, fmt.Errorf("CreateMessage result has %d content blocks; use CreateMessageWithTools for multiple content", len(r.Content))
	}
	var content mcp.Content
	if len(r.Content) > 0 {
		content = r.Content[0]
	}
	//lint:ignore SA1019 the gateway relays sampling between clients and servers that still use it (deprecated by SEP-2577, functional in its deprecation window)
	return &mcp.CreateMessageResult{Meta: r.Meta, Content: content, Model: r.Model, Role: r.Role, StopReason: r.StopReason}, nil
}
