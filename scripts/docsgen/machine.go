package docsgen

import (
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Machine describes this machine in one line: OS, CPU model and count,
// memory, Go version.
func Machine() string {
	cpu := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int
		if _, err := fmt.Sscanf(string(data), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %d GiB RAM", (kb+512*1024)/(1024*1024))
		}
	}
	return fmt.Sprintf("%s/%s, %d x %s%s, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpu, mem, runtime.Version())
}
