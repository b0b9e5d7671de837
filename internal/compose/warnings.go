package compose

import (
	"io"
	"sync"

	"github.com/sirupsen/logrus"
)

// compose-go warns through logrus's global logger (an obsolete "version"
// attribute, a deprecated external.name, several files of one name): left
// alone, those lines reach pin's standard error in logrus's own format. A
// load borrows the logger, one load at a time, and collects what it warns
// into Project.Warnings for the caller to say in its own words.
var logMu sync.Mutex

// warningHook collects the messages of the levels it is fired for.
type warningHook struct{ msgs []string }

func (h *warningHook) Levels() []logrus.Level {
	return []logrus.Level{logrus.PanicLevel, logrus.FatalLevel, logrus.ErrorLevel, logrus.WarnLevel}
}

func (h *warningHook) Fire(e *logrus.Entry) error {
	h.msgs = append(h.msgs, e.Message)
	return nil
}

// collectWarnings silences logrus's standard logger and collects its
// warnings until restore is called. Hold logMu.
func collectWarnings() (h *warningHook, restore func()) {
	l := logrus.StandardLogger()
	h = &warningHook{}
	out := l.Out
	hooks := l.ReplaceHooks(logrus.LevelHooks{})
	l.AddHook(h)
	l.SetOutput(io.Discard)
	return h, func() {
		l.SetOutput(out)
		l.ReplaceHooks(hooks)
	}
}
