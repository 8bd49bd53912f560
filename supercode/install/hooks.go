package install

import (
	"fmt"

	"github.com/laserkit/laserkit/supercode/client"
)

// isOurs recognises a hook command laserbrain installed (client.ParseCommand):
// at any path, guarded or not, so a reinstall from a new location replaces
// the old entry.
func isOurs(command, self string) (ev client.EventName, ok bool) {
	p, ok := client.ParseCommand(command, self)
	return p.Event, ok
}

// hookObject is one hook entry for client n: Claude Code's shape
// ({"type","command","timeout"} in seconds), which Qwen Code and Codex's
// hooks.json read too; Gemini CLI's adds a name and takes the timeout in
// milliseconds.
func hookObject(n client.Name, self string, ev client.EventName) *node {
	obj := orderedMap{{"type", "command"}}
	if n == client.Gemini {
		obj = append(obj, struct {
			key string
			val any
		}{"name", "laserbrain " + client.Subcommand(ev)})
	}
	obj = append(obj, struct {
		key string
		val any
	}{"command", client.HookCommand(self, n, ev)})
	timeout := client.HookTimeout
	if n == client.Gemini {
		timeout *= 1000
	}
	obj = append(obj, struct {
		key string
		val any
	}{"timeout", timeout})
	return fromValue(obj)
}

// mergeHooks puts client n's laserbrain hooks in settings.hooks, one list
// per client event. keep goes through an event's list as it is: it drops
// ours when removing, replaces ours in place otherwise, and says whether
// ours was there; when it was not, entry is appended. Remove drops the
// event lists and the hooks object that taking ours out emptied. The
// user's own hooks are untouched.
func mergeHooks(root *node, n client.Name, remove bool, path string,
	keep func(e client.Hook, items []*node) ([]*node, bool), entry func(e client.Hook) *node) error {
	keys := []string{"hooks"}
	chain, err := root.objectsAt(keys, path, remove)
	if chain == nil {
		return err
	}
	hooks := chain[1]
	for _, e := range client.Hooks(n) {
		list := hooks.get(e.ClientEvent)
		if list != nil && list.kind != '[' {
			return fmt.Errorf("%s: hooks.%s is not a list; fix it by hand (nothing was changed)", path, e.ClientEvent)
		}
		found := false
		if list != nil {
			list.items, found = keep(e, list.items)
		}
		if !remove && !found {
			if list == nil {
				list = &node{kind: '['}
				hooks.set(e.ClientEvent, list)
			}
			list.items = append(list.items, entry(e))
		}
		if remove && list != nil && len(list.items) == 0 {
			hooks.del(e.ClientEvent)
		}
	}
	if remove {
		dropEmptied(chain, keys)
	}
	return nil
}

// mergeGroupedHooks puts client n's hooks in the grouped shape Claude
// Code, Qwen Code, Gemini CLI and Codex's hooks.json share ({EVENT:
// [{matcher?, hooks: [{type, command, …}]}]}): an entry of ours already
// there (any path) is replaced in place; a missing one is appended as a
// new matcher group. Remove also drops the groups that held only ours.
func mergeGroupedHooks(root *node, n client.Name, self string, remove bool, path string) error {
	keep := func(e client.Hook, groups []*node) ([]*node, bool) {
		found := false
		keptGroups := groups[:0:0]
		for _, g := range groups {
			inner := g.get("hooks")
			if inner == nil || inner.kind != '[' {
				keptGroups = append(keptGroups, g)
				continue
			}
			had := len(inner.items)
			kept := inner.items[:0:0]
			for _, h := range inner.items {
				cmd, _ := h.get("command").str()
				if ev, ok := isOurs(cmd, self); ok && ev == e.Event {
					if remove || found {
						continue // removed, or a duplicate of ours
					}
					found = true
					h = hookObject(n, self, e.Event)
					// Keep the group's matcher ours, too.
					if e.Matcher != "" {
						if m, _ := g.get("matcher").str(); m == "" {
							g.set("matcher", &node{kind: 's', scalar: e.Matcher})
						}
					}
				}
				kept = append(kept, h)
			}
			inner.items = kept
			if len(kept) == 0 && had > 0 {
				continue // the group held only ours
			}
			keptGroups = append(keptGroups, g)
		}
		return keptGroups, found
	}
	entry := func(e client.Hook) *node {
		group := orderedMap{}
		if e.Matcher != "" {
			group = append(group, struct {
				key string
				val any
			}{"matcher", e.Matcher})
		}
		group = append(group, struct {
			key string
			val any
		}{"hooks", []any{hookObject(n, self, e.Event)}})
		return fromValue(group)
	}
	return mergeHooks(root, n, remove, path, keep, entry)
}

// copilotHook is one Copilot CLI hook entry ({"type","bash","timeoutSec"}).
func copilotHook(self string, ev client.EventName) *node {
	return fromValue(orderedMap{{"type", "command"}, {"bash", client.HookCommand(self, client.Copilot, ev)}, {"timeoutSec", client.HookTimeout}})
}

// mergeFlatHooks puts Copilot CLI's laserbrain hooks in settings.hooks, in
// its flat shape ({event: [{type, bash, timeoutSec}]}), ours replaced in
// place, the user's kept.
func mergeFlatHooks(root *node, self string, remove bool, path string) error {
	keep := func(e client.Hook, items []*node) ([]*node, bool) {
		found := false
		kept := items[:0:0]
		for _, h := range items {
			cmd, _ := h.get("bash").str()
			if ev, ok := isOurs(cmd, self); ok && ev == e.Event {
				if remove || found {
					continue
				}
				found, h = true, copilotHook(self, e.Event)
			}
			kept = append(kept, h)
		}
		return kept, found
	}
	entry := func(e client.Hook) *node { return copilotHook(self, e.Event) }
	return mergeHooks(root, client.Copilot, remove, path, keep, entry)
}
