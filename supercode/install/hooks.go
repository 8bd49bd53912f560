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

// mergeGroupedHooks puts client n's laserbrain hooks in settings.hooks,
// in the grouped shape Claude Code, Qwen Code, Gemini CLI and Codex's
// hooks.json share ({EVENT: [{matcher?, hooks: [{type, command, …}]}]}):
// an entry of ours already there (any path) is replaced in place; a
// missing one is appended as a new matcher group. Remove takes ours out,
// and drops the groups and event lists that held only ours. The user's own
// hooks are untouched.
func mergeGroupedHooks(root *node, n client.Name, self string, remove bool, path string) error {
	hooks := root.get("hooks")
	if hooks == nil && remove {
		return nil
	}
	hooks, err := root.objectAt("hooks", path)
	if err != nil {
		return err
	}
	for _, e := range client.Hooks(n) {
		list := hooks.get(e.ClientEvent)
		if list != nil && list.kind != '[' {
			return fmt.Errorf("%s: hooks.%s is not a list; fix it by hand (nothing was changed)", path, e.ClientEvent)
		}
		found := false
		if list != nil {
			keptGroups := list.items[:0:0]
			for _, g := range list.items {
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
			list.items = keptGroups
		}
		if !remove && !found {
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
			if list == nil {
				list = &node{kind: '['}
				hooks.set(e.ClientEvent, list)
			}
			list.items = append(list.items, fromValue(group))
		}
		if remove && list != nil && len(list.items) == 0 {
			hooks.del(e.ClientEvent)
		}
	}
	if remove && len(hooks.members) == 0 {
		root.del("hooks")
	}
	return nil
}

// copilotHook is one Copilot CLI hook entry ({"type","bash","timeoutSec"}).
func copilotHook(self string, ev client.EventName) *node {
	return fromValue(orderedMap{{"type", "command"}, {"bash", client.HookCommand(self, client.Copilot, ev)}, {"timeoutSec", client.HookTimeout}})
}

// mergeFlatHooks puts Copilot CLI's laserbrain hooks in settings.hooks, in
// its flat shape ({event: [{type, bash, timeoutSec}]}), ours replaced in
// place, the user's kept.
func mergeFlatHooks(root *node, self string, remove bool, path string) error {
	hooks := root.get("hooks")
	if hooks == nil && remove {
		return nil
	}
	hooks, err := root.objectAt("hooks", path)
	if err != nil {
		return err
	}
	for _, e := range client.Hooks(client.Copilot) {
		list := hooks.get(e.ClientEvent)
		if list != nil && list.kind != '[' {
			return fmt.Errorf("%s: hooks.%s is not a list; fix it by hand (nothing was changed)", path, e.ClientEvent)
		}
		found := false
		if list != nil {
			kept := list.items[:0:0]
			for _, h := range list.items {
				cmd, _ := h.get("bash").str()
				if ev, ok := isOurs(cmd, self); ok && ev == e.Event {
					if remove || found {
						continue
					}
					found, h = true, copilotHook(self, e.Event)
				}
				kept = append(kept, h)
			}
			list.items = kept
		}
		if !remove && !found {
			if list == nil {
				list = &node{kind: '['}
				hooks.set(e.ClientEvent, list)
			}
			list.items = append(list.items, copilotHook(self, e.Event))
		}
		if remove && list != nil && len(list.items) == 0 {
			hooks.del(e.ClientEvent)
		}
	}
	if remove && len(hooks.members) == 0 {
		root.del("hooks")
	}
	return nil
}
