package main

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// commandFlags are each command's flags, by the command's name.
func commandFlags() map[string]*flags {
	d := io.Discard
	return map[string]*flags{
		"demo": newDemoCmd(d, d).flags, "up": newUpCmd(d, d).flags, "migrate": newMigrateCmd(d, d).flags,
		"serve": newServeCmd(d, d).flags, "consume": newConsumeCmd(d, d).flags, "cuenta": newCuentaCmd(d, d).flags, "extracto": newExtractoCmd(d, d).flags,
		"audit": newAuditCmd(d, d).flags, "send": newSendCmd(d, d).flags, "compare": newCompareCmd(d, d).flags,
	}
}

// A flag several commands have says one thing in all of them, true for each: what one
// command does with it, or a default of its own, is in that command's description,
// which the flag's help points to. --wait alone means two things: how long migrate
// waits in all, and how long consume waits for each receive.
func TestASharedFlagHasOneHelpText(t *testing.T) {
	byName := commandFlags()
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
		if byName[c.name] == nil {
			t.Errorf("commandFlags lacks %s", c.name)
		}
	}
	usages := map[string]map[string][]string{} // flag → help text → commands
	for _, name := range names {
		f := byName[name]
		if f == nil {
			continue
		}
		f.VisitAll(func(fl *flag.Flag) {
			if usages[fl.Name] == nil {
				usages[fl.Name] = map[string][]string{}
			}
			usages[fl.Name][fl.Usage] = append(usages[fl.Name][fl.Usage], name)
			if strings.Contains(fl.Usage, "the description above") && strings.TrimSpace(f.text.about) == "" {
				t.Errorf("ledger %s --%s points to the command's description, and it has none", name, fl.Name)
			}
		})
	}
	for flagName, texts := range usages {
		if len(texts) > 1 && flagName != "wait" {
			t.Errorf("--%s has %d help texts: %v", flagName, len(texts), texts)
		}
	}
	for _, flagName := range []string{"endpoint", "table", "sqs-endpoint", "queue-url", "dlq-url", "json", "addr", "from", "accounts", "movements", "seed"} {
		for _, cmds := range usages[flagName] {
			if len(cmds) < 2 {
				t.Errorf("--%s is only ledger %s's", flagName, cmds[0])
			}
		}
	}
}

// --help describes the command between its synopsis and its flags.
func TestHelpDescribesTheCommandAboveItsFlags(t *testing.T) {
	for name, f := range commandFlags() {
		var out strings.Builder
		f.stdout = &out
		f.help()
		about := strings.TrimSpace(f.text.about)
		if i := strings.Index(out.String(), "\n\n"+about+"\n\nFlags:\n"); about == "" || i < 0 || !strings.HasPrefix(out.String(), "Usage: ledger "+name+" ") {
			t.Errorf("ledger %s --help:\n%s\nwant the synopsis, then the description, then the flags", name, out.String())
		}
	}
}
