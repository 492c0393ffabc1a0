package main

import (
	"context"
	"maps"
	"slices"

	"github.com/connectd/connectd/client"
)

// What a Kafka Connect worker (Java's or connectd's) without exactly-once
// source support says when asked to validate a connector that requires
// it: a distributed one, and connectd's standalone one.
const (
	msgNoExactlyOnce           = "This worker does not have exactly-once source support enabled."
	msgStandaloneNoExactlyOnce = "Kafka Connect in standalone mode does not support exactly-once source connectors."
)

// exactlyOnceSources asks a cluster whether it runs source connectors
// exactly once (exactly.once.source.support=enabled), which Kafka
// Connect's REST API does not show: it validates a source connector's
// config with exactly.once.support=required, which such a worker refuses
// with msgNoExactlyOnce (or, standalone, msgStandaloneNoExactlyOnce), and
// a worker with the support does not. known is
// false when the cluster could not be asked (no source config given, or
// the validation failed).
func exactlyOnceSources(ctx context.Context, c *client.Client, config map[string]string) (enabled, known bool) {
	class := config["connector.class"]
	if class == "" {
		return false, false
	}
	cfg := maps.Clone(config)
	cfg["exactly.once.support"] = "required"
	infos, err := c.Validate(ctx, class, cfg)
	if err != nil {
		return false, false
	}
	errs := infos.Errors()["exactly.once.support"]
	return !slices.Contains(errs, msgNoExactlyOnce) && !slices.Contains(errs, msgStandaloneNoExactlyOnce), true
}

// sourceConfig is the config of one of the source connectors listed, nil
// when there is none.
func sourceConfig(all map[string]client.ConnectorExpanded) map[string]string {
	for _, name := range slices.Sorted(maps.Keys(all)) {
		if info := all[name].Info; info != nil && info.Type == "source" {
			return info.Config
		}
	}
	return nil
}
