package clients

import (
	"fmt"
	"slices"
	"strings"
)

// listChanges are the edits connect made to Gemini CLI's mcp.allowed and
// mcp.excluded lists.
type listChanges struct {
	allowedAdded, excludedRemoved []string
}

// Gemini CLI's lists of the servers it starts: when mcp.allowed exists,
// only those; never those in mcp.excluded.
var (
	geminiAllowed  = []string{"mcp", "allowed"}
	geminiExcluded = []string{"mcp", "excluded"}
)

// connect writes Switchboard's entries and returns their names. An entry
// of one of those names that Switchboard did not write is replaced too,
// and listed in p.Conflicts for Apply to refuse unless taken over; or, when
// an earlier Switchboard wrote it, in p.Earlier, with a note. Stale
// per-server entries are removed only when Switchboard wrote them.
func connect(c Client, doc document, cn Connect, owns func(Entry) bool, p *Plan) ([]string, listChanges, error) {
	var lists listChanges
	if err := validateConnect(c, cn); err != nil {
		return nil, lists, err
	}
	entries, err := doc.entries()
	if err != nil {
		return nil, lists, err
	}
	names := []string{EntryName}
	for _, s := range cn.PerServer {
		names = append(names, EntryName+"-"+s)
	}
	for _, name := range names {
		if i := slices.IndexFunc(entries, func(e Entry) bool { return e.Name == name }); i >= 0 && !owns(entries[i]) {
			found := Conflict{Name: name, Target: targetOf(entries[i])}
			if earlierSwitchboard(entries[i]) {
				p.Earlier = append(p.Earlier, found)
				p.Notes = append(p.Notes, fmt.Sprintf("entry %s is an earlier Switchboard's (a loopback endpoint and a Switchboard token "+
					"that this data directory did not write: a reinstall, or another data directory); it is replaced, "+
					"and the file is backed up first", found))
			} else {
				p.Conflicts = append(p.Conflicts, found)
			}
		}
		server := strings.TrimPrefix(strings.TrimPrefix(name, EntryName), "-")
		v := entryValue(c, cn, server)
		if err := doc.upsert(name, v); err != nil {
			return nil, lists, err
		}
		if p.wrote == nil {
			p.wrote = map[string]obj{}
		}
		p.wrote[name] = v
	}
	for _, e := range entries {
		if !isOwnName(e.Name) || slices.Contains(names, e.Name) {
			continue
		}
		if !owns(e) {
			p.Kept = append(p.Kept, e.Name)
			continue
		}
		if _, err := doc.remove(e.Name); err != nil {
			return nil, lists, err
		}
		p.removed = append(p.removed, e.Name)
	}
	if c.ID == "gemini-cli" {
		jd := doc.(*jsonDoc)
		allowed, hasAllowed, err := jd.stringList(geminiAllowed)
		if err != nil {
			return nil, lists, err
		}
		excluded, _, err := jd.stringList(geminiExcluded)
		if err != nil {
			return nil, lists, err
		}
		for _, name := range names {
			if hasAllowed && !slices.Contains(allowed, name) {
				if err := jd.listAdd(geminiAllowed, name); err != nil {
					return nil, lists, err
				}
				lists.allowedAdded = append(lists.allowedAdded, name)
			}
			if slices.Contains(excluded, name) {
				if err := jd.listRemove(geminiExcluded, name); err != nil {
					return nil, lists, err
				}
				lists.excludedRemoved = append(lists.excludedRemoved, name)
			}
		}
	}
	return names, lists, nil
}

// undoLists takes the names connect added to Gemini CLI's mcp.allowed out
// again, and puts those it took out of mcp.excluded back.
func undoLists(c Client, doc document, rec *ownership) error {
	if c.ID != "gemini-cli" {
		return nil
	}
	jd := doc.(*jsonDoc)
	for _, name := range rec.AllowedAdded {
		if err := jd.listRemove(geminiAllowed, name); err != nil {
			return err
		}
	}
	excluded, has, err := jd.stringList(geminiExcluded)
	if err != nil || !has {
		return err
	}
	for _, name := range rec.ExcludedRemoved {
		if !slices.Contains(excluded, name) {
			if err := jd.listAdd(geminiExcluded, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// targetOf says what an entry runs or points at, for a conflict message.
// Only the command or the URL's scheme, host and path: never arguments,
// queries or headers, which may hold secrets.
func targetOf(e Entry) string {
	if e.URL != "" {
		u := e.URL
		if i := strings.IndexAny(u, "?#"); i >= 0 {
			u = u[:i]
		}
		return u
	}
	if e.Command != "" {
		return "runs " + e.Command
	}
	return "no command or URL"
}

// disconnect removes Switchboard's entries; entries of its names that it
// did not write are left and listed in p.Kept.
func disconnect(doc document, owns func(Entry) bool, p *Plan) error {
	entries, err := doc.entries()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !isOwnName(e.Name) {
			continue
		}
		if !owns(e) {
			if !slices.Contains(p.Kept, e.Name) {
				p.Kept = append(p.Kept, e.Name)
			}
			continue
		}
		removed, err := doc.remove(e.Name)
		if err != nil {
			return err
		}
		if !removed {
			return fmt.Errorf("clients: could not remove %q", e.Name)
		}
		p.removed = append(p.removed, e.Name)
	}
	return nil
}
