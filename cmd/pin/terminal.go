package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
)

func useColor(w io.Writer) bool { return isTerminal(w) && os.Getenv("NO_COLOR") == "" }

// isTerminal reports whether w is a terminal that shows the escape
// sequences of colour and the progress line: a character device, and on
// Windows a console that takes them (escapes).
// golang.org/x/term is not a requirement of the module, and a character
// device is all the colour and progress decisions need.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && escapes(f)
}

// progressDelay is how long a run goes before its progress line shows:
// a run shorter than that prints none. Tests shorten it.
var progressDelay = time.Second

// stderrIsTerminal decides whether progress may show; tests replace it.
var stderrIsTerminal = func(s streams) bool { return isTerminal(s.Err) }

// progress is the one-line count of hosts read and modules done, per
// source, redrawn on a terminal's stderr once the run has lasted delay,
// and erased at the end. Off, it does nothing.
type progress struct {
	w       io.Writer
	on      bool
	command string
	mu      sync.Mutex
	// shown: the delay has passed; draws go out from then on.
	shown                 bool
	timer                 *time.Timer
	hosts, hostsTotal     int
	modules, modulesTotal int
}

// newProgress returns the progress line of command ("resolve", "lock",
// "outdated") on w, shown after delay when on; stop it with clear.
func newProgress(w io.Writer, command string, on bool, delay time.Duration) *progress {
	p := &progress{w: w, on: on, command: command}
	if !on {
		return p
	}
	if delay <= 0 {
		p.shown = true
		return p
	}
	p.timer = time.AfterFunc(delay, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.on {
			p.shown = true
			p.draw()
		}
	})
	return p
}

// progressOn reports whether a command's progress line may show: stderr is
// a terminal and the output is not JSON.
func progressOn(s streams, format string) bool { return format != "json" && stderrIsTerminal(s) }

func (p *progress) loaded(c *catalogue.Catalogue) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hostsTotal, p.modulesTotal = len(c.Hosts), len(c.Modules)
}

func (p *progress) hostDone(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hosts, p.hostsTotal = done, total
	p.draw()
}

func (p *progress) moduleDone(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.modules, p.modulesTotal = done, total
	p.draw()
}

func (p *progress) draw() {
	if p.on && p.shown {
		fmt.Fprintf(p.w, "\r\x1b[Kpin %s: hosts %d/%d, modules %d/%d", p.command, p.hosts, p.hostsTotal, p.modules, p.modulesTotal)
	}
}

// clear stops the line and erases it, if it was shown; it draws nothing
// after.
func (p *progress) clear() {
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.on && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	p.on = false
}
