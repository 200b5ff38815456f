package tools

import (
	"strconv"
	"strings"
)

// FormatSize renders a byte count the way messages show sizes: "512 bytes",
// "39.1KB", "256KB", "1.3MB".
func FormatSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	units := []string{"KB", "MB", "GB"}
	v := float64(n) / 1024
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + units[i]
}
