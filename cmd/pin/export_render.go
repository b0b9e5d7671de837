package main

import "fmt"

// exportOutput is pin export's result, the JSON of --format json.
type exportOutput struct {
	Schema     int             `json:"schema"`
	Command    string          `json:"command"`
	Check      bool            `json:"check"`
	Files      []exportFile    `json:"files"`
	References []exportEntry   `json:"references"`
	Skipped    []exportSkip    `json:"skipped"`
	Findings   []exportFinding `json:"findings"`
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
