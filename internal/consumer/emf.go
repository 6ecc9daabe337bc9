package consumer

import (
	"encoding/json"

	"github.com/ledger-dev/ledger/internal/ledger"
)

// Namespace is the CloudWatch namespace of the consumer's metrics.
const Namespace = "Ledger"

// The metric names, one counter per outcome plus the optimistic-locking retries.
const (
	MetricApplied              = "Applied"
	MetricDuplicate            = "Duplicate"
	MetricConflictingDuplicate = "ConflictingDuplicate"
	MetricRejected             = "Rejected"
	MetricFailed               = "Failed"
	MetricRetries              = "VersionConflictRetries"
)

var metricNames = []string{MetricApplied, MetricDuplicate, MetricConflictingDuplicate, MetricRejected, MetricFailed, MetricRetries}

// emit writes one Embedded Metric Format document for the batch: CloudWatch Logs turns
// it into metrics without any API call from the function.
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
func (h *Handler) emit(recs []Record) {
	if h.opts.Metrics == nil {
		return
	}
	counts := map[string]int{}
	for _, r := range recs {
		switch r.Result.Outcome {
		case ledger.Applied:
			counts[MetricApplied]++
		case ledger.Duplicate:
			counts[MetricDuplicate]++
		case ledger.ConflictingDuplicate:
			counts[MetricConflictingDuplicate]++
		case ledger.Rejected:
			counts[MetricRejected]++
		default:
			counts[MetricFailed]++
		}
		counts[MetricRetries] += max(r.Result.Attempts-1, 0)
	}
	defs := make([]map[string]string, len(metricNames))
	doc := map[string]any{"Strategy": string(h.opts.Strategy)}
	for i, name := range metricNames {
		defs[i] = map[string]string{"Name": name, "Unit": "Count"}
		doc[name] = counts[name]
	}
	doc["_aws"] = map[string]any{
		"Timestamp": h.opts.Now().UnixMilli(),
		"CloudWatchMetrics": []map[string]any{{
			"Namespace":  Namespace,
			"Dimensions": [][]string{{"Strategy"}},
			"Metrics":    defs,
		}},
	}
	line, err := json.Marshal(doc)
	if err != nil {
		return // cannot happen: the document is made of maps, strings and numbers
	}
	_, _ = h.opts.Metrics.Write(append(line, '\n'))
}
