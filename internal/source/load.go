package source

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// Request is what one command loads.
type Request struct {
	// Catalogue and Lock are the paths of the catalogue (a file, or a
	// folder of *.hcl files) and of the lockfile (absent means empty).
	Catalogue, Lock string
	Options
	// Host, when set, is the only host observed ("pin lock --from-host",
	// "pin plan HOST"); it must be in the catalogue.
	Host string
	// Loaded, when not nil, is called with the catalogue once the files
	// are loaded, before any host is asked.
	Loaded func(*catalogue.Catalogue)
	// HostDone, when not nil, is called as each host has answered, with
	// how many have and how many will (for a progress line); never
	// concurrently.
	HostDone func(done, total int)
}

// Inputs are what a command works on: the catalogue, the previous lock (its
// bytes too, to tell whether a new one changes anything), what the hosts
// answered, and the registries to ask.
type Inputs struct {
	Catalogue *catalogue.Catalogue
	Lock      *lock.Lock
	// LockSum is the SHA-256 of the lockfile's bytes as read (of none when
	// there was no file): a run keeps that, not the bytes, to tell whether
	// its lock changes (a 10,000-module lock is 5.8 MB).
	LockSum [sha256.Size]byte
	// Elsewhere are the entries of other environments' locks held against
	// this environment's hosts (a host that moved): floors here too (see
	// resolve.Record.Elsewhere). Set by Environments and Environment.
	Elsewhere []resolve.Foreign
	Observed  observe.Observed
	// Skipped are the hosts that could not be read and that the
	// catalogue lets a run go on without (skip_unreachable), with why:
	// the run must say so.
	Skipped map[string]error
	// Host, when not "", is the one host read (Request.Host): every other
	// host was not asked.
	Host string
	// Only, when not nil, names the modules the run decides ("pin
	// resolve MODULE…", set by Run.Select): part of the record
	// (resolve.Record.Only).
	Only       []string
	Registries *Registries
}

// DiagnosticsError is a catalogue or lockfile with errors. Files holds the
// sources the diagnostics point into, for rendering with snippets.
type DiagnosticsError struct {
	// What is "catalogue" or "lockfile"; Path is the path given.
	What, Path  string
	Files       map[string]*hcl.File
	Diagnostics hcl.Diagnostics
}

func (e *DiagnosticsError) Error() string {
	if e.What == "catalogue" {
		return fmt.Sprintf("catalogue %s has errors", e.Path)
	}
	return fmt.Sprintf("lockfile %s cannot be read", e.Path)
}

// LoadFiles loads the catalogue and the previous lock. A catalogue's
// warnings come back with it; errors in either are a *DiagnosticsError.
func LoadFiles(catPath, lockPath string) (*catalogue.Catalogue, hcl.Diagnostics, *lock.Lock, []byte, error) {
	cat, diags := catalogue.Load(catPath)
	if diags.HasErrors() {
		return nil, nil, nil, nil, &DiagnosticsError{What: "catalogue", Path: catPath, Files: cat.Files, Diagnostics: diags}
	}
	old, oldBytes, ldiags := lock.Load(lockPath)
	if ldiags.HasErrors() {
		return nil, nil, nil, nil, &DiagnosticsError{What: "lockfile", Path: lockPath, Files: map[string]*hcl.File{lockPath: {Bytes: oldBytes}}, Diagnostics: ldiags}
	}
	return cat, diags, old, oldBytes, nil
}

// Load runs the first half of every command: load the catalogue and the
// lock, build the host adapters and the registries, and observe the hosts
// (all of them, or r.Host alone). Warnings of the catalogue are returned
// with the inputs; a host that fails is in Observed.Errors, not an error
// here. The error is a *DiagnosticsError for bad files and an
// *UnknownHostError for a host the catalogue lacks.
func Load(ctx context.Context, r Request) (*Inputs, hcl.Diagnostics, error) {
	cat, warnings, old, oldBytes, err := LoadFiles(r.Catalogue, r.Lock)
	if err != nil {
		return nil, nil, err
	}
	regs := NewRegistries(cat, r.Options)
	hosts, err := hostsCounted(cat, r.Options, r.Host, regs.observed)
	if err != nil {
		return nil, warnings, err
	}
	if r.Loaded != nil {
		r.Loaded(cat)
	}
	observed, skipped := readHosts(ctx, cat, hosts, r.Options, r.HostDone)
	return &Inputs{
		Catalogue:  cat,
		Lock:       old,
		LockSum:    sha256.Sum256(oldBytes),
		Observed:   observed,
		Skipped:    skipped,
		Host:       r.Host,
		Registries: regs,
	}, warnings, nil
}
