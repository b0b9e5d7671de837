package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/atomicfile"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/resolve"
)

func newLockCmd(g *globalOptions, s streams) *cobra.Command {
	o := &resolveOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "lock --from-host HOST",
		Short: "Record what a host runs into the lock",
		Long: `lock --from-host reads what HOST runs and records it: the observations go
into the lock, and where a running image is newer than what would be locked
(at-least-running, track-upstream) the running image becomes the locked one.
Keep what is running, and record what that was. Modules that run nothing on
HOST keep their entries. --snapshot writes what was read to a file that a
catalogue can name as the host's snapshot, for offline use. With
environments, the lock written is HOST's environment's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.FromHost == "" {
				return withCode(exitInput, fmt.Errorf("lock needs --from-host HOST"))
			}
			return runResolve(cmd.Context(), o, s)
		},
	}
	cmd.Flags().StringVar(&o.FromHost, "from-host", "", "the catalogue host to read")
	_ = cmd.RegisterFlagCompletionFunc("from-host", completeHost(g))
	cmd.Flags().StringVar(&o.Snapshot, "snapshot", "", "also write what was read to this snapshot file")
	cmd.Flags().BoolVar(&o.Check, "check", false, "write no lock; exit 1 if it would change")
	return cmd
}

// writeSnapshot writes the host's snapshot atomically; a host that could not
// be read writes nothing.
func writeSnapshot(path string, seen observe.Observed, hostName string) error {
	if err, ok := seen.Errors[hostName]; ok {
		return hostFailure(hostName, err, "no snapshot written")
	}
	s := seen.Snapshots[hostName]
	b, err := s.Marshal()
	if err != nil {
		return err
	}
	if _, err := atomicfile.Write(path, b, atomicfile.Options{Owned: host.IsPinsSnapshot}); err != nil {
		return withCode(exitInput, fmt.Errorf("writing snapshot %w; name another file with --snapshot, or move it away", err))
	}
	return nil
}

type planHostOptions struct {
	*globalOptions
	Host string
}

func newPlanCmd(g *globalOptions, s streams) *cobra.Command {
	o := &planHostOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "plan HOST",
		Short: "Preview a cutover: what the lock would start instead of what runs",
		Long: `plan previews taking over the containers of HOST: for every container there
that a module takes over, what runs now, what the lock would start instead,
and whether that is an upgrade, the same, a downgrade or unknown, with the
rule that decided. It exits 0 when every verdict is upgrade or same, and 1
otherwise: a deployment step calls it as a gate before it replaces a
container. With environments, HOST is judged by its environment's lock.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completePlanHost(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Host = args[0]
			return runPlanHost(cmd.Context(), o, s)
		},
	}
	return cmd
}

type cutoverOutput struct {
	Schema  int           `json:"schema"`
	Command string        `json:"command"`
	Host    string        `json:"host"`
	Safe    bool          `json:"safe"`
	Items   []cutoverItem `json:"containers"`
}

type cutoverItem struct {
	Module    string            `json:"module"`
	Container string            `json:"container"`
	State     string            `json:"state"`
	Running   observationOutput `json:"running"`
	Locked    *imageOutput      `json:"locked"`
	Verdict   string            `json:"verdict"`
	Rule      string            `json:"rule,omitempty"`
	Detail    string            `json:"detail,omitempty"`
	// Strays are, of a missing container, the containers on the host
	// that run the module's repository and no module takes over.
	Strays []string `json:"strays,omitempty"`
}

func runPlanHost(ctx context.Context, o *planHostOptions, s streams) error {
	in, err := load(ctx, o.globalOptions, s, o.Host, nil)
	if err != nil {
		return err
	}
	if err, ok := in.Observed.Errors[o.Host]; ok {
		return hostFailure(o.Host, err, "")
	}
	// The host is judged by its own environment's lock.
	envs, err := environments(in, o.globalOptions, s, nil, o.Host)
	if err != nil {
		return err
	}
	rin := envs[0].Input(o.now())
	cuts, err := resolve.PlanCutover(ctx, rin)
	requestSummary(o.globalOptions, s, in.Registries)
	if err != nil {
		return withCode(sourceCode(err), err)
	}
	out := cutoverOutput{Schema: JSONSchema, Command: "plan", Host: o.Host, Safe: true, Items: []cutoverItem{}}
	for _, c := range cuts {
		ob := c.Observation
		item := cutoverItem{Module: c.Module, Container: ob.Container, State: ob.State, Locked: lockImage(c.Locked), Verdict: string(c.Verdict),
			Rule: string(c.Order.Rule), Detail: c.Order.Detail,
			Running: observation(ob)}
		if item.Locked != nil {
			item.Locked.Reason = "" // the why of the lock is in the lock; the plan says the verdict
		}
		if ms := c.Missing; ms != nil {
			item.Running = observationOutput{Host: ob.Host, Container: ob.Container, State: ob.State}
			item.Rule, item.Detail, item.Strays = "", ms.Why, ms.Strays
		}
		out.Safe = out.Safe && c.Safe()
		out.Items = append(out.Items, item)
	}
	if o.Format == "json" {
		if err := writeJSON(s.Out, out); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		writeCutover(&b, out)
		if _, err := io.WriteString(s.Out, sanitize(b.String())); err != nil {
			return err
		}
	}
	if !out.Safe {
		why := "a container would be replaced by an older, unordered, unlocked or no longer verified image"
		for _, it := range out.Items {
			if it.Verdict == string(resolve.VerdictMissing) {
				why += ", or a container a module takes over there is missing (said above: rename it back, or change runs_on)"
				break
			}
		}
		return withCode(exitFindings, fmt.Errorf("cutover of %s is not safe: %s", o.Host, why))
	}
	return nil
}

func writeCutover(w io.Writer, out cutoverOutput) {
	if len(out.Items) == 0 {
		fmt.Fprintf(w, "No container on %s is taken over by a module.\n", out.Host)
		return
	}
	for _, it := range out.Items {
		if it.State == resolve.StateMissing {
			fmt.Fprintf(w, "%s/%s (module %s): %s\n", out.Host, it.Container, it.Module, strings.ToUpper(it.Verdict))
			fmt.Fprintf(w, "  starts   %s\n", describeLocked(it.Locked))
			fmt.Fprintf(w, "  why      %s\n\n", it.Detail)
			continue
		}
		fmt.Fprintf(w, "%s/%s (module %s): %s %s\n", out.Host, it.Container, it.Module, strings.ToUpper(it.Verdict), cutoverText(it))
		fmt.Fprintf(w, "  runs     %s%s [%s]\n", replicasText(it.Running), describeSeen(it.Running), it.State)
		if len(it.Running.Pods) > 0 {
			fmt.Fprintf(w, "  pods     %s\n", strings.Join(it.Running.Pods, ", "))
		}
		fmt.Fprintf(w, "  starts   %s\n", describeLocked(it.Locked))
		if it.Rule != "" {
			fmt.Fprintf(w, "  rule     %s: %s\n", it.Rule, it.Detail)
		}
		fmt.Fprintln(w)
	}
	if out.Safe {
		fmt.Fprintf(w, "Cutover of %s: safe.\n", out.Host)
	} else {
		fmt.Fprintf(w, "Cutover of %s: NOT safe.\n", out.Host)
	}
}
