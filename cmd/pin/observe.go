package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/host/published"
)

type observeOptions struct {
	*globalOptions
	Host     string
	Key      string
	Output   string
	Push     string
	Platform string
	Force    bool
}

func newObserveCmd(g *globalOptions, s streams) *cobra.Command {
	o := &observeOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "observe HOST --key cosign.key [--push REPOSITORY | --output FILE]",
		Short: "Publish what a host runs, signed, for pin to read where it cannot reach",
		Long: `observe reads HOST as pin resolve would (every container whatever its
state, and the images) and writes its observation: that snapshot, the host's
platform and when it was read, signed with a cosign private key (its
password in COSIGN_PASSWORD, as cosign reads it). --output writes FILE and
FILE.sig (default HOST.json), as a pair, and only over files pin observe
wrote (or --force); --push publishes it to an OCI repository under
the tag HOST, with its signature beside it as cosign signs an image. A cron
job or systemd timer on each host is the agent; the catalogue that reads it
names observations = "oci://REPOSITORY" (or the file) and the public key.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeHost(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := textOnly(g, "observe", "the observation it writes (--output FILE) is JSON already, the snapshot with the host's platform and when it was read"); err != nil {
				return err
			}
			o.Host = args[0]
			return runObserve(cmd.Context(), o, s)
		},
	}
	cmd.Flags().StringVar(&o.Key, "key", "", "cosign private key file to sign with (cosign.key; password in COSIGN_PASSWORD)")
	cmd.Flags().StringVar(&o.Output, "output", "", "write the observation to this file, and its signature to FILE.sig (default HOST.json, unless --push)")
	cmd.Flags().StringVar(&o.Push, "push", "", "publish to this OCI repository (registry/repository, no tag: the tag is HOST)")
	cmd.Flags().BoolVar(&o.Force, "force", false, "replace an --output file (or its .sig) that is not an observation pin wrote")
	cmd.Flags().StringVar(&o.Platform, "platform", runtime.GOOS+"/"+runtime.GOARCH, "the host's platform (default: the machine pin observe runs on, the host itself when it is the agent)")
	return cmd
}

func runObserve(ctx context.Context, o *observeOptions, s streams) error {
	if o.Key == "" {
		return withCode(exitInput, errors.New("observe needs --key cosign.key: an unsigned observation would be refused by every reader"))
	}
	signer, err := published.LoadKey(o.Key, []byte(os.Getenv("COSIGN_PASSWORD")))
	if err != nil {
		return withCode(exitInput, err)
	}
	in, err := loadStarts(ctx, o.globalOptions, s, o.Host) // published with start times, for promotions
	if err != nil {
		return err
	}
	if err, ok := in.Observed.Errors[o.Host]; ok {
		code := exitSource
		if badInput(err) {
			code = exitInput
		}
		return withCode(code, fmt.Errorf("host %s: %w; nothing published", o.Host, err))
	}
	obs := &published.Observation{Host: o.Host, Platform: o.Platform, ReadAt: time.Now().UTC(), Snapshot: in.Observed.Snapshots[o.Host]}
	if o.Push != "" {
		ref, err := published.Push(ctx, o.Push, obs, signer, published.PushOptions{})
		if err != nil {
			return withCode(exitSource, err)
		}
		fmt.Fprintf(s.Out, "pin observe: %s: %d containers, read %s, signed by %s, published as %s (tag %s)\n",
			o.Host, len(obs.Snapshot.Containers), obs.ReadAt.Format("2006-01-02T15:04:05Z"), signer.Fingerprint, ref, o.Host)
		if o.Output == "" {
			return nil
		}
	}
	path := o.Output
	if path == "" {
		path = o.Host + ".json"
	}
	if err := published.WriteFile(path, obs, signer, o.Force); err != nil {
		return withCode(exitInput, fmt.Errorf("writing the observation: %w", err))
	}
	fmt.Fprintf(s.Out, "pin observe: %s: %d containers, read %s, signed by %s, written to %s and %s\n",
		o.Host, len(obs.Snapshot.Containers), obs.ReadAt.Format("2006-01-02T15:04:05Z"), signer.Fingerprint, path, published.SignatureFile(path))
	return nil
}

// skippedHosts says which hosts a run goes on without (skip_unreachable),
// and why, in host order.
func skippedHosts(s streams, skipped map[string]error) {
	names := make([]string, 0, len(skipped))
	for n := range skipped {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(s.Err, "pin: host %s skipped (skip_unreachable): %v; its modules are held against the other hosts and the lock only\n", n, skipped[n])
	}
}
