// Command connectd is a Kafka Connect-compatible worker: the connectd
// command line with the built-in plugins.
package main

import (
	"os"

	"github.com/connectd/connectd"
)

func main() {
	if connectd.RunCLI(connectd.Builtin()) != nil {
		os.Exit(1)
	}
}
