package main

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/pin-tool/pin/internal/catalogue"
)

func useColor(w io.Writer) bool { return isTerminal(w) && os.Getenv("NO_COLOR") == "" }

// isTerminal reports whether w is a terminal (a character device).
// golang.org/x/term is not a requirement of the module, and a character
// device is all the colour and progress decisions need.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress is the one-line count of hosts and modules done, redrawn on a
// terminal's stderr and erased at the end. Off, it does nothing.
type progress struct {
	w                     io.Writer
	on                    bool
	mu                    sync.Mutex
	hosts, hostsTotal     int
	modules, modulesTotal int
}

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
	if p.on {
		fmt.Fprintf(p.w, "\r\x1b[Kpin outdated: hosts %d/%d, modules %d/%d", p.hosts, p.hostsTotal, p.modules, p.modulesTotal)
	}
}

func (p *progress) clear() {
	if p.on {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
