package herder

import (
	"fmt"
	"github.com/connectd/connectd/internal/configprovider"
	"github.com/connectd/connectd/internal/secrets"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javajson"
	"github.com/connectd/connectd/internal/worker"
)

// The framework's connector keys (Kafka's ConnectorConfig,
// SinkConnectorConfig and SourceConnectorConfig), in their order, the
// converters checked against plugins.
func commonDef(plugins *connect.PluginSet) *connect.ConfigDef {
	converterValidator := func(v any) error { return converterValidator(plugins, v) }
	headerConverterValidator := headerConverterValidatorFor(plugins)
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "name", Type: connect.ConfigString, Required: true, Validator: connect.NonEmptyStringWithoutControlChars(), Importance: connect.High, Doc: "Globally unique name to use for this connector.", Group: "Common", OrderInGroup: 1, Width: connect.WidthMedium, DisplayName: "Connector name"}).
		Define(connect.ConfigKey{Name: "connector.class", Type: connect.ConfigString, Required: true, Importance: connect.High, Doc: "Name or alias of the class for this connector. Must be a subclass of org.apache.kafka.connect.connector.Connector. If the connector is org.apache.kafka.connect.file.FileStreamSinkConnector, you can either specify this full name,  or use \"FileStreamSink\" or \"FileStreamSinkConnector\" to make the configuration a bit shorter", Group: "Common", OrderInGroup: 2, Width: connect.WidthLong, DisplayName: "Connector class"}).
		Define(connect.ConfigKey{Name: "tasks.max", Type: connect.ConfigInt, Default: int32(1), Validator: connect.AtLeast(1), Importance: connect.High, Doc: "Maximum number of tasks to use for this connector.", Group: "Common", OrderInGroup: 3, Width: connect.WidthShort, DisplayName: "Tasks max"}).
		Define(connect.ConfigKey{Name: "tasks.max.enforce", Type: connect.ConfigBoolean, Default: true, Importance: connect.Low, Doc: "(Deprecated) Whether to enforce that the tasks.max property is respected by the connector. By default, connectors that generate too many tasks will fail, and existing sets of tasks that exceed the tasks.max property will also be failed. If this property is set to false, then connectors will be allowed to generate more than the maximum number of tasks, and existing sets of tasks that exceed the tasks.max property will be allowed to run. This property is deprecated and will be removed in an upcoming major release.", Group: "Common", OrderInGroup: 4, Width: connect.WidthShort, DisplayName: "Enforce tasks max"}).
		Define(connect.ConfigKey{Name: "key.converter", Type: connect.ConfigClass, Importance: connect.Low, Doc: "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. When not set, the worker's is used.", Group: "Common", OrderInGroup: 5, Width: connect.WidthShort, DisplayName: "Key converter class", Validator: converterValidator}).
		Define(connect.ConfigKey{Name: "value.converter", Type: connect.ConfigClass, Importance: connect.Low, Doc: "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. When not set, the worker's is used.", Group: "Common", OrderInGroup: 6, Width: connect.WidthShort, DisplayName: "Value converter class", Validator: converterValidator}).
		Define(connect.ConfigKey{Name: "header.converter", Type: connect.ConfigClass, Importance: connect.Low, Doc: "HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the header values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro. By default, the SimpleHeaderConverter is used to serialize header values to strings and deserialize them by inferring the schemas.", Group: "Common", OrderInGroup: 7, Width: connect.WidthShort, DisplayName: "Header converter class", Validator: headerConverterValidator}).
		Define(connect.ConfigKey{Name: "config.action.reload", Type: connect.ConfigString, Default: "restart", Validator: connect.OneOfIgnoreCase("none", "restart"), Importance: connect.Low, Doc: "The action that Connect should take on the connector when changes in external configuration providers result in a change in the connector's configuration properties.", Group: "Common", OrderInGroup: 8, Width: connect.WidthMedium, DisplayName: "Reload Action"}).
		Define(connect.ConfigKey{Name: "transforms", Type: connect.ConfigList, Default: []string{}, Validator: aliasesValidator, Importance: connect.Low, Doc: "Aliases for the transformations to be applied to records.", Group: "Transforms", OrderInGroup: 1, Width: connect.WidthLong, DisplayName: "Transforms"}).
		Define(connect.ConfigKey{Name: "predicates", Type: connect.ConfigList, Default: []string{}, Validator: aliasesValidator, Importance: connect.Low, Doc: "Aliases for the predicates used by transformations.", Group: "Predicates", OrderInGroup: 1, Width: connect.WidthLong, DisplayName: "Predicates"}).
		Define(connect.ConfigKey{Name: "errors.retry.timeout", Type: connect.ConfigLong, Default: int64(0), Importance: connect.Medium, Doc: "The maximum duration in milliseconds that a failed operation will be reattempted. The default is 0, which means no retries will be attempted. Use -1 for infinite retries.", Group: "Error Handling", OrderInGroup: 1, Width: connect.WidthMedium, DisplayName: "Retry Timeout for Errors"}).
		Define(connect.ConfigKey{Name: "errors.retry.delay.max.ms", Type: connect.ConfigLong, Default: int64(60000), Importance: connect.Medium, Doc: "The maximum duration in milliseconds between consecutive retry attempts.", Group: "Error Handling", OrderInGroup: 2, Width: connect.WidthMedium, DisplayName: "Maximum Delay Between Retries for Errors"}).
		Define(connect.ConfigKey{Name: "errors.tolerance", Type: connect.ConfigString, Default: "none", Validator: connect.OneOfIgnoreCase("none", "all"), Importance: connect.Medium, Doc: "Behavior for tolerating errors during connector operation. 'none' is the default value and signals that any error will result in an immediate connector task failure; 'all' changes the behavior to skip over problematic records.", Group: "Error Handling", OrderInGroup: 3, Width: connect.WidthShort, DisplayName: "Error Tolerance"}).
		Define(connect.ConfigKey{Name: "errors.log.enable", Type: connect.ConfigBoolean, Default: false, Importance: connect.Medium, Doc: "If true, write each error and the details of the failed operation and problematic record to the Connect application log.", Group: "Error Handling", OrderInGroup: 4, Width: connect.WidthShort, DisplayName: "Log Errors"}).
		Define(connect.ConfigKey{Name: "errors.log.include.messages", Type: connect.ConfigBoolean, Default: false, Importance: connect.Medium, Doc: "Whether to include in the log the Connect record that resulted in a failure.", Group: "Error Handling", OrderInGroup: 5, Width: connect.WidthShort, DisplayName: "Log Error Details"})
}

func sinkDef(plugins *connect.PluginSet) *connect.ConfigDef {
	return commonDef(plugins).
		Define(connect.ConfigKey{Name: "topics", Type: connect.ConfigList, Default: []string{}, Importance: connect.High, Doc: "List of topics to consume, separated by commas", Group: "Common", OrderInGroup: 4, Width: connect.WidthLong, DisplayName: "Topics"}).
		Define(connect.ConfigKey{Name: "topics.regex", Type: connect.ConfigString, Default: "", Validator: regexValidator, Importance: connect.High, Doc: "Regular expression giving topics to consume. Under the hood, the regex is compiled to a <code>java.util.regex.Pattern</code>. Only one of topics or topics.regex should be specified.", Group: "Common", OrderInGroup: 4, Width: connect.WidthLong, DisplayName: "Topics regex"}).
		Define(connect.ConfigKey{Name: "errors.deadletterqueue.topic.name", Type: connect.ConfigString, Default: "", Importance: connect.Medium, Doc: "The name of the topic to be used as the dead letter queue (DLQ) for messages that result in an error when processed by this sink connector, or its transformations or converters. The topic name is blank by default, which means that no messages are to be recorded in the DLQ.", Group: "Error Handling", OrderInGroup: 6, Width: connect.WidthMedium, DisplayName: "Dead Letter Queue Topic Name"}).
		Define(connect.ConfigKey{Name: "errors.deadletterqueue.topic.replication.factor", Type: connect.ConfigShort, Default: int16(3), Importance: connect.Medium, Doc: "Replication factor used to create the dead letter queue topic when it doesn't already exist.", Group: "Error Handling", OrderInGroup: 7, Width: connect.WidthMedium, DisplayName: "Dead Letter Queue Topic Replication Factor"}).
		Define(connect.ConfigKey{Name: "errors.deadletterqueue.context.headers.enable", Type: connect.ConfigBoolean, Default: false, Importance: connect.Medium, Doc: "If true, add headers containing error context to the messages written to the dead letter queue. To avoid clashing with headers from the original record, all error context header keys, all error context header keys will start with <code>__connect.errors.</code>", Group: "Error Handling", OrderInGroup: 8, Width: connect.WidthMedium, DisplayName: "Enable Error Context Headers"})
}

func sourceDef(plugins *connect.PluginSet) *connect.ConfigDef {
	return commonDef(plugins).
		Define(worker.TopicCreationGroupsKey()).
		Define(connect.ConfigKey{Name: "exactly.once.support", Type: connect.ConfigString, Default: "requested", Validator: connect.OneOfIgnoreCase("requested", "required"), Importance: connect.Medium, Doc: "Permitted values are requested, required. If set to \"required\", forces a preflight check for the connector to ensure that it can provide exactly-once semantics with the given configuration.", Group: "Exactly Once Support", OrderInGroup: 1, Width: connect.WidthShort, DisplayName: "Exactly once support"}).
		Define(connect.ConfigKey{Name: "transaction.boundary", Type: connect.ConfigString, Default: "poll", Validator: connect.OneOfIgnoreCase("poll", "interval", "connector"), Importance: connect.Medium, Doc: "Permitted values are: poll, interval, connector. If set to 'poll', a new producer transaction will be started and committed for every batch of records that each task from this connector provides to Connect. If set to 'connector', relies on connector-defined transaction boundaries; note that not all connectors are capable of defining their own transaction boundaries, and in that case, attempts to instantiate a connector with this value will fail. Finally, if set to 'interval', commits transactions only after a user-defined time interval has passed.", Group: "Exactly Once Support", OrderInGroup: 2, Width: connect.WidthShort, DisplayName: "Transaction Boundary"}).
		Define(connect.ConfigKey{Name: "transaction.boundary.interval.ms", Type: connect.ConfigLong, Validator: atLeastZeroOrUnset, Importance: connect.Low, Doc: "If 'transaction.boundary' is set to 'interval', determines the interval for producer transaction commits by connector tasks. If unset, defaults to the value of the worker-level 'offset.flush.interval.ms' property. It has no effect if a different transaction.boundary is specified.", Group: "Exactly Once Support", OrderInGroup: 3, Width: connect.WidthShort, DisplayName: "Transaction boundary interval"}).
		Define(connect.ConfigKey{Name: "offsets.storage.topic", Type: connect.ConfigString, Importance: connect.Low, Doc: "The name of a separate offsets topic to use for this connector. Ignored in standalone mode.", Group: "offsets.topic", OrderInGroup: 1, Width: connect.WidthLong, DisplayName: "Offsets topic"})
}

// atLeastZeroOrUnset is Kafka's check of transaction.boundary.interval.ms:
// unset, or at least 0.
func atLeastZeroOrUnset(v any) error {
	if v == nil {
		return nil
	}
	return connect.AtLeast(0)(v)
}

var sinkGroups = []string{"Common", "Transforms", "Predicates", "Error Handling"}
var sourceGroups = []string{"Common", "Transforms", "Predicates", "Error Handling", "Topic Creation", "Exactly Once Support", "offsets.topic"}

func converterValidator(plugins *connect.PluginSet, v any) error {
	s, _ := v.(string)
	if s == "" {
		return nil
	}
	p, err := plugins.Lookup(s, connect.PluginConverter)
	if err != nil || p.Type != connect.PluginConverter {
		return fmt.Errorf("Class %s could not be found.", s)
	}
	return nil
}

func headerConverterValidatorFor(plugins *connect.PluginSet) connect.ConfigValidator {
	return func(v any) error {
		s, _ := v.(string)
		if s == "" {
			return nil
		}
		if _, err := plugins.Lookup(s, connect.PluginHeaderConverter); err != nil {
			return fmt.Errorf("Class %s could not be found.", s)
		}
		return nil
	}
}

func regexValidator(v any) error {
	if s, _ := v.(string); s != "" {
		if _, err := regexp.Compile(s); err != nil {
			return fmt.Errorf("Must be a valid regular expression: %v", err)
		}
	}
	return nil
}

// javaMapString renders a config map as Java's HashMap.toString, for
// messages that quote the whole config as Kafka's do, but with its
// passwords hidden.
func javaMapString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range javajson.HashMapOrder(keys) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "=" + connect.RedactConfigValue(k, m[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// validate checks a connector config as Kafka Connect's
// AbstractHerder.validateConnectorConfig does, and its tasks.max against
// the worker's tasksLimit (tasks.max.per.connector), its classes looked up
// in plugins, and returns the client.ConfigInfos the validate endpoint shows.
// With topicCreation (the worker's topic.creation.enable), a source's
// topic.creation.<group>.* keys are checked too, as its tasks will read them.
//
// Config provider placeholders are resolved with providers first, as
// Kafka's validation does; a value from a provider is shown as its
// placeholder, and a placeholder that does not resolve is an error of its
// key.
func validate(plugins *connect.PluginSet, providers *configprovider.Resolver, raw map[string]string, tasksLimit int, topicCreation bool) (*client.ConfigInfos, error) {
	config, fromProviders, resolveErrs := providers.ResolveAll(raw)
	class, ok := config["connector.class"]
	if !ok {
		return nil, BadRequest("Connector config %s contains no connector type", javaMapString(config))
	}
	conn, p, err := worker.Instantiate(plugins, class)
	if err != nil {
		return nil, BadRequest("%s", err.Error())
	}
	base, groups := sourceDef(plugins), sourceGroups
	if p.Type == connect.PluginSink {
		base, groups = sinkDef(plugins), sinkGroups
	}
	infos := &client.ConfigInfos{Name: class, Groups: slices.Clone(groups)}
	add := func(k *connect.ConfigKey, v connect.ConfigValue) {
		def := keyInfo(*k)
		val := &client.ConfigValueInfo{Name: v.Name, RecommendedValues: nonNil(v.Recommended), Errors: nonNil(v.Errors), Visible: v.Visible}
		val.Value = connect.FormatValue(v.Value)
		if !k.Required || v.Value != nil {
			if given, ok := raw[k.Name]; ok && len(v.Errors) > 0 && k.Type != connect.ConfigPassword {
				val.Value = &given
			}
		}
		if fromProviders[k.Name] {
			given := raw[k.Name]
			val.Value = &given
		}
		if err := resolveErrs[k.Name]; err != nil {
			val.Errors = append(val.Errors, err.Error())
			delete(resolveErrs, k.Name)
		}
		infos.ErrorCount += len(val.Errors)
		infos.Configs = append(infos.Configs, client.ConfigInfo{Definition: &def, Value: val})
		if k.Group != "" && !slices.Contains(infos.Groups, k.Group) {
			infos.Groups = append(infos.Groups, k.Group)
		}
	}
	base, aliasGroups, aliasChecks := enrich(plugins, base, config)
	infos.Groups = append(infos.Groups, aliasGroups...)
	baseValues := base.Validate(config)
	for i := range baseValues {
		baseValues[i].Errors = append(baseValues[i].Errors, aliasChecks[baseValues[i].Name]...)
	}
	if p.Type == connect.PluginSink {
		sinkTopicChecks(config, baseValues)
	}
	tasksLimitCheck(baseValues, tasksLimit)
	for _, v := range baseValues {
		add(base.Key(v.Name), v)
	}
	if tc := worker.TopicCreationDef(config); tc != nil && topicCreation && p.Type == connect.PluginSource {
		for _, v := range tc.Validate(config) {
			if base.Key(v.Name) == nil {
				add(tc.Key(v.Name), v)
			}
		}
	}
	own := conn.Config()
	extra := map[string][]string{}
	if cv, ok := conn.(connect.Validator); ok {
		extra = cv.Validate(config)
	}
	for _, v := range own.Validate(config) {
		if base.Key(v.Name) != nil {
			continue
		}
		v.Errors = append(v.Errors, extra[v.Name]...)
		add(own.Key(v.Name), v)
	}
	// A placeholder that does not resolve in a key no definition has.
	for _, name := range slices.Sorted(maps.Keys(resolveErrs)) {
		extra[name] = append(extra[name], resolveErrs[name].Error())
	}
	// Errors the connector names for keys its definition lacks are
	// listed without a definition, as AbstractHerder.generateResult does.
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		if own.Key(name) != nil || base.Key(name) != nil || len(extra[name]) == 0 {
			continue
		}
		given, ok := raw[name]
		val := &client.ConfigValueInfo{Name: name, RecommendedValues: []string{}, Errors: extra[name], Visible: true}
		if ok {
			val.Value = &given
		}
		infos.ErrorCount += len(val.Errors)
		infos.Configs = append(infos.Configs, client.ConfigInfo{Value: val})
	}
	// A check that reached the outside system (a database that refused a
	// role) may quote a secret in its message.
	hidden := secrets.Of(own, config, fromProviders)
	for _, c := range infos.Configs {
		for i, e := range c.Value.Errors {
			c.Value.Errors[i] = hidden.Hide(e)
		}
	}
	return infos, nil
}

// sinkTopicChecks adds Kafka's SinkConnectorConfig.validate errors: one
// of topics and topics.regex, and a dead letter queue the connector does
// not consume itself (it would read back its own failures).
func sinkTopicChecks(config map[string]string, values []connect.ConfigValue) {
	topics := strings.TrimSpace(config["topics"])
	regex := strings.TrimSpace(config["topics.regex"])
	dlq := strings.TrimSpace(config["errors.deadletterqueue.topic.name"])
	add := func(name, msg string) {
		for i := range values {
			if values[i].Name == name {
				values[i].Errors = append(values[i].Errors, msg)
			}
		}
	}
	switch {
	case topics != "" && regex != "":
		msg := "topics and topics.regex are mutually exclusive options, but both are set."
		add("topics", msg)
		add("topics.regex", msg)
	case topics == "" && regex == "":
		msg := "Must configure one of topics or topics.regex"
		add("topics", msg)
		add("topics.regex", msg)
	}
	if dlq == "" {
		return
	}
	if topics != "" {
		// Kafka's parseTopicsList: the names without empty ones and
		// duplicates, quoted as Java's List.toString.
		var list []string
		for _, t := range strings.Split(topics, ",") {
			if t = strings.TrimSpace(t); t != "" && !slices.Contains(list, t) {
				list = append(list, t)
			}
		}
		if slices.Contains(list, dlq) {
			add("topics", fmt.Sprintf("The DLQ topic '%s' may not be included in the list of topics ('topics=[%s]') consumed by the connector", dlq, strings.Join(list, ", ")))
		}
	}
	if regex != "" {
		if re, err := regexp.Compile("^(?:" + regex + ")$"); err == nil && re.MatchString(dlq) {
			add("topics.regex", fmt.Sprintf("The DLQ topic '%s' may not be matched by the regex for the topics ('topics.regex=%s') consumed by the connector", dlq, regex))
		}
	}
}

func tasksLimitCheck(values []connect.ConfigValue, limit int) {
	for i := range values {
		v := &values[i]
		if n, ok := v.Value.(int32); ok && v.Name == "tasks.max" && len(v.Errors) == 0 && int(n) > limit {
			v.Errors = append(v.Errors, fmt.Sprintf("Invalid value %d for configuration tasks.max: Value must be at most %d, this worker's %s", n, limit, worker.TasksMaxPerConnectorConfig))
		}
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func keyInfo(k connect.ConfigKey) client.ConfigKeyInfo {
	info := client.ConfigKeyInfo{
		Name: k.Name, Type: string(k.Type), Required: k.Required, Importance: string(k.Importance),
		Documentation: k.Doc, Order: k.OrderInGroup, Width: string(k.Width), DisplayName: k.DisplayName,
		Dependents: nonNil(k.Dependents),
	}
	if !k.Required {
		info.DefaultValue = connect.FormatValue(k.Default)
	}
	if k.Group != "" {
		g := k.Group
		info.Group = &g
	}
	return info
}

// validationError is the 400 a create or update gets for an invalid
// config, worded as Kafka Connect's.
func validationError(infos *client.ConfigInfos) *Error {
	var lines []string
	for _, c := range infos.Configs {
		if c.Value != nil {
			lines = append(lines, c.Value.Errors...)
		}
	}
	return BadRequest("Connector configuration is invalid and contains the following %d error(s):\n%s\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`",
		infos.ErrorCount, strings.Join(lines, "\n"))
}
