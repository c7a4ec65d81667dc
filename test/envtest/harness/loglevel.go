package harness

import (
	"os"
	"strconv"

	"go.uber.org/zap/zapcore"
)

// zapLevel reads AIBOM_TEST_LOG_LEVEL (e.g. -1 for debug); default info.
func zapLevel() zapcore.Level {
	if v, err := strconv.Atoi(os.Getenv("AIBOM_TEST_LOG_LEVEL")); err == nil {
		return zapcore.Level(v)
	}
	return zapcore.ErrorLevel
}
