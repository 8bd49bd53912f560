// Package localstore is laserbrain's default Store: one directory on this
// machine. A run is two files under runs/: <id>.json, its state, replaced
// atomically on every save, and <id>.history.jsonl, its checks, appended to
// (the state records how many bytes of it are committed, so a save cut short
// leaves nothing half-written). A process holds a run's advisory lock while
// it steps it. contexts.json and evidence.json sit in the config directory
// the reference uses, and are read-modified-written under a lock, so two
// processes never lose each other's updates.
package localstore
