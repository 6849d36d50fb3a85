package clients

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrNoFile is the error of a plan for a client that keeps no file
// Switchboard may edit (Cherry Studio): it is offered an install link
// instead (see OfferLink).
var ErrNoFile = errors.New("it keeps no configuration file Switchboard may edit; connecting it offers an install link that you confirm in the app")

// An Offer is the install link of a client that keeps no file Switchboard
// may edit (Remote DeepLink: Cherry Studio). Opening it asks the user, in
// the app, to add Switchboard's entry; until then nothing is connected,
// and Switchboard cannot tell afterwards either (the app's database is its
// own), so such a client is never shown as connected.
type Offer struct {
	Client Client
	// Link is the deep link, with the token in it.
	Link string
	// Entry is the JSON the link carries, the token masked: what the
	// user is asked to confirm.
	Entry string
}

// OfferLink builds client c's install link for connect cn: Cherry
// Studio's cherrystudio://mcp/install?servers=<base64 of {"mcpServers":
// {"switchboard": {…}}}>, URL-encoded as its handler expects (the
// standard alphabet's "+" and "/" would otherwise be read as a space and
// a path). PerServer is not offered: one link, one entry.
func OfferLink(c Client, cn Connect) (Offer, error) {
	if c.Remote != DeepLink {
		return Offer{}, fmt.Errorf("%s keeps a configuration file: connect it (plan, then apply) instead of offering a link", c.Name)
	}
	if len(cn.PerServer) > 0 {
		return Offer{}, fmt.Errorf("%s is offered one entry, %q; a server's own entry (%s) is not offered", c.Name, EntryName, strings.Join(cn.PerServer, ", "))
	}
	if err := validateConnect(c, cn); err != nil {
		return Offer{}, err
	}
	v := entryValue(c, cn, "")
	payload := map[string]any{"mcpServers": map[string]any{EntryName: toPlain(v)}}
	data, err := json.Marshal(payload)
	if err != nil {
		return Offer{}, fmt.Errorf("encoding the install link of %s: %w", c.Name, err)
	}
	shown, err := json.MarshalIndent(payload, "", "  ")
	if err != nil {
		return Offer{}, fmt.Errorf("encoding the install link of %s: %w", c.Name, err)
	}
	entry := string(shown)
	if cn.Token != "" {
		entry = strings.ReplaceAll(entry, cn.Token, Masked)
	}
	link := "cherrystudio://mcp/install?servers=" + url.QueryEscape(base64.StdEncoding.EncodeToString(data))
	return Offer{Client: c, Link: link, Entry: entry}, nil
}

// OfferNote is what the user is told once the link is offered.
func OfferNote(c Client) string {
	return fmt.Sprintf("offered, confirm in %s: the app asks whether to add the server %q; Switchboard cannot see its answer, "+
		"so %s is never shown as connected (it keeps no file Switchboard may read)", c.Name, EntryName, c.Name)
}
