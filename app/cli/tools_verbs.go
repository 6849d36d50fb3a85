package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

const toolsUsage = "expected: tools held [SERVER], or tools approve SERVER [TOOL]"

// toolsVerb shows and approves the tools held from clients because they
// are new or changed since the user approved the server's tools (see
// app/approvals).
func toolsVerb() verb {
	var asJSON, diff *bool
	var fingerprint *string
	return verb{
		name:    "tools",
		args:    " held [SERVER] | approve SERVER [TOOL]",
		summary: "list the tools held from clients because they are new or changed since you approved them, or approve them",
		flags: func(fs *flag.FlagSet) {
			asJSON = fs.Bool("json", false, "with held: print JSON instead of a table")
			diff = fs.Bool("diff", false, "with held: show each change as a diff of the old and new description and input schema")
			fingerprint = fs.String("fingerprint", "", "with approve SERVER TOOL: approve only the version you reviewed, whose fingerprint "+
				"tools held --diff shows; a tool that changed again since is refused")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet) error {
			if len(e.args) == 0 {
				return usageError{toolsUsage}
			}
			switch action := e.args[0]; {
			case action == "held" && len(e.args) <= 2:
			case action == "approve" && (len(e.args) == 2 || len(e.args) == 3):
			case action != "held" && action != "approve":
				return usageError{fmt.Sprintf("unknown action %q: %s", action, toolsUsage)}
			default:
				return usageError{toolsUsage}
			}
			// `tools approve S --diff` must not approve unseen: the flags
			// of held are usage errors with approve.
			if e.args[0] == "approve" && (*diff || *asJSON) {
				return usageError{"--diff and --json go with held: review with `tools held " + e.args[1] + " --diff`, then approve"}
			}
			if *fingerprint != "" && (e.args[0] != "approve" || len(e.args) != 3) {
				return usageError{"--fingerprint goes with approve SERVER TOOL"}
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			if e.args[0] == "approve" {
				req := wire.ApproveRequest{Fingerprint: *fingerprint}
				if len(e.args) == 3 {
					req.Tool = e.args[2]
				}
				res, err := c.ApproveTools(ctx, e.args[1], req)
				if err != nil {
					return err
				}
				for _, h := range res.Approved {
					kind := "tool"
					switch h.Kind {
					case wire.KindPrompt:
						kind = "prompt"
					case wire.KindTemplate:
						kind = "resource template"
					}
					fmt.Fprintf(e.stdout, "%s: approved %s %s (%s); clients see it again\n", h.Server, kind, h.Tool, changeWords(h.Change))
				}
				return nil
			}
			server := ""
			if len(e.args) == 2 {
				server = e.args[1]
			}
			held, err := c.HeldTools(ctx, server)
			if err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(e.stdout, held)
			}
			printHeld(e.stdout, held, *diff)
			return nil
		},
	}
}

// changeWords says what a HeldTool.Change means: "new", or what changed.
func changeWords(change string) string {
	if change == "new" {
		return change
	}
	return change + " changed"
}

// scanWords counts findings by severity, worst first: "2 high, 1 low",
// or "-" for none.
func scanWords(findings []wire.Finding) string {
	n := map[string]int{}
	for _, f := range findings {
		n[f.Severity]++
	}
	var parts []string
	for _, sev := range []string{"high", "medium", "low"} {
		if n[sev] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[sev], sev))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func printHeld(w io.Writer, held []wire.HeldTool, diff bool) {
	if len(held) == 0 {
		fmt.Fprintln(w, "No tools are held: every tool servers list is one you approved.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tTOOL\tCHANGE\tSCAN\tHELD SINCE")
	for _, h := range held {
		name := h.Tool
		if h.Kind != "" && h.Kind != wire.KindTool {
			name += " (" + h.Kind + ")" // a prompt or resource template, approved by the same verb
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.Server, name, changeWords(h.Change), scanWords(h.Findings),
			h.Listed.Time.Local().Format(time.DateTime))
	}
	tw.Flush()
	if diff {
		for _, h := range held {
			fmt.Fprintf(w, "\n%s\nfingerprint: %s (approve this version only: switchboard tools approve %s %s --fingerprint %s)\n",
				h.Message, h.Listed.Fingerprint, h.Server, h.Tool, h.Listed.Fingerprint)
			if len(h.Findings) > 0 {
				fmt.Fprintf(w, "the scan found (%s):\n", scanWords(h.Findings))
				for _, f := range h.Findings {
					fmt.Fprintf(w, "  %s\n", f.Line)
				}
			}
			fmt.Fprint(w, h.Diff)
		}
	}
	fmt.Fprintln(w, "\nClients do not see these tools until you approve them: switchboard tools approve SERVER [TOOL]"+
		" (--diff shows what changed).")
}
