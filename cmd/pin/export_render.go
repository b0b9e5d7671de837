package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pin-tool/pin/internal/atomicfile"
	"github.com/pin-tool/pin/internal/export"
)

// exportOutput is pin export's result, the JSON of --format json.
type exportOutput struct {
	Schema     int             `json:"schema"`
	Command    string          `json:"command"`
	Check      bool            `json:"check"`
	Files      []exportFile    `json:"files"`
	References []exportEntry   `json:"references"`
	Skipped    []exportSkip    `json:"skipped"`
	Findings   []exportFinding `json:"findings"`
	// Refused are why nothing was written: a host the lock would
	// downgrade (cutover), a file it would make name an older image
	// (written-newer), a file pin does not write over (file: not pin's,
	// changed meanwhile, a dangling link).
	Refused []exportRefused `json:"refused"`
}

type exportRefused struct {
	Where string `json:"where"`
	// Module is "" for a file refusal.
	Module  string `json:"module"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

type exportFile struct {
	Path string `json:"path"`
	// Changed: the file disagrees with the lock (would change); Written:
	// it was written (never with --check).
	Changed bool `json:"changed"`
	Written bool `json:"written"`
}

type exportEntry struct {
	Where   string `json:"where"`
	Module  string `json:"module"`
	Old     string `json:"old"`
	New     string `json:"new"`
	Changed bool   `json:"changed"`
}

type exportSkip struct {
	What string `json:"what"`
	Why  string `json:"why"`
	// Unwritten: a module covers it and export could not write (or
	// check) it; the run exits 1.
	Unwritten bool `json:"unwritten"`
}

type exportFinding struct {
	Where   string `json:"where"`
	Message string `json:"message"`
}

// writeExport renders the result for people: references that change,
// what was skipped and why, findings on stderr with file:line, and the
// files written or disagreeing.
func writeExport(s streams, out exportOutput) {
	for _, e := range out.References {
		if e.Changed {
			fmt.Fprintf(s.Out, "%s: %s → %s (module %s)\n", sanitize(e.Where), orNone(sanitize(e.Old)), sanitize(e.New), e.Module)
		}
	}
	verb := "cannot write"
	if out.Check {
		verb = "cannot check"
	}
	unwritten := 0
	for _, sk := range out.Skipped {
		if sk.Unwritten {
			unwritten++
			fmt.Fprintf(s.Err, "%s %s: %s\n", verb, sanitize(sk.What), sanitize(sk.Why))
			continue
		}
		fmt.Fprintf(s.Out, "skipped %s: %s\n", sanitize(sk.What), sanitize(sk.Why))
	}
	for _, f := range out.Findings {
		fmt.Fprintf(s.Err, "%s: %s\n", sanitize(f.Where), sanitize(f.Message))
	}
	changed := 0
	for _, f := range out.Files {
		switch {
		case f.Written:
			changed++
			fmt.Fprintf(s.Out, "Wrote %s.\n", sanitize(f.Path))
		case f.Changed:
			changed++
			fmt.Fprintf(s.Out, "%s disagrees with the lock\n", sanitize(f.Path))
		}
	}
	switch {
	case changed > 0, unwritten > 0:
	case out.Check && len(out.Findings) == 0:
		fmt.Fprintln(s.Out, "Every file agrees with the lock.")
	case !out.Check:
		fmt.Fprintln(s.Out, "Nothing to write: every file agrees with the lock.")
	}
}

// exportReport is the report of an export as the command shows it.
func exportReport(rep *export.Report, check bool) exportOutput {
	out := exportOutput{Schema: JSONSchema, Command: "export", Check: check, Files: []exportFile{}, References: []exportEntry{}, Skipped: []exportSkip{}, Findings: []exportFinding{}, Refused: []exportRefused{}}
	for _, e := range rep.Entries {
		out.References = append(out.References, exportEntry{Where: e.Where, Module: e.Module, Old: e.Old, New: e.New, Changed: e.Old != e.New})
	}
	for _, sk := range rep.Skipped {
		out.Skipped = append(out.Skipped, exportSkip{What: sk.What, Why: sk.Why, Unwritten: sk.Unwritten})
	}
	for _, f := range rep.Findings {
		out.Findings = append(out.Findings, exportFinding{Where: f.Where, Message: f.Msg})
	}
	for _, f := range rep.Files {
		out.Files = append(out.Files, exportFile{Path: f.Path, Changed: f.Changed(), Written: rep.Written && f.Changed()})
	}
	slices.SortFunc(out.Files, func(a, b exportFile) int { return strings.Compare(a.Path, b.Path) })
	for _, c := range rep.Unsafe {
		where := c.Observation.Host + "/" + c.Observation.Container
		out.Refused = append(out.Refused, exportRefused{Where: where, Module: c.Module, Kind: "cutover", Message: sanitize(fmt.Sprintf("%s (module %s): %s: runs %s, the lock names %s", where, c.Module,
			strings.ToUpper(string(c.Verdict)), describeImage(c.Observation.Image.Tag, c.Observation.Image.Digest), c.Locked.Ref()))})
	}
	for _, d := range rep.Downgrades {
		out.Refused = append(out.Refused, exportRefused{Where: d.At, Module: d.Module, Kind: "written-newer", Message: sanitize(d.String())})
	}
	for _, err := range rep.Refused {
		where := "export"
		var fe *atomicfile.Error
		if errors.As(err, &fe) {
			where = fe.Path
		}
		out.Refused = append(out.Refused, exportRefused{Where: where, Kind: "file", Message: sanitize(err.Error())})
	}
	return out
}

// exportVerdict is the exit of an export, once its report is shown: 1
// with --check when a file disagrees with the lock (or would be refused),
// and whenever a reference a module covers could not be written.
func exportVerdict(s streams, out exportOutput, rep *export.Report) error {
	changed := 0
	for _, f := range out.Files {
		if f.Changed {
			changed++
		}
	}
	unwritten := rep.Unwritten()
	if out.Check && (changed > 0 || len(out.Findings) > 0 || unwritten > 0 || len(rep.Refused) > 0) {
		for _, err := range rep.Refused {
			fmt.Fprintf(s.Err, "pin: %s\n", sanitize(err.Error()))
		}
		var why []string
		if changed > 0 || len(out.Findings) > 0 {
			why = append(why, fmt.Sprintf("%d file(s) disagree with the lock, %d reference(s) disagree with themselves: run pin export without --check", changed, len(out.Findings)))
		}
		if unwritten > 0 {
			why = append(why, fmt.Sprintf("%d reference(s) a module covers could not be checked: write them as said above", unwritten))
		}
		if len(why) == 0 {
			why = append(why, "a file pin would write is not pin's (said above)")
		}
		return withCode(exitFindings, errors.New(strings.Join(why, "; ")))
	}
	if unwritten > 0 {
		return withCode(exitFindings, fmt.Errorf("%d reference(s) a module covers could not be written (said above); what could be was", unwritten))
	}
	return nil
}
