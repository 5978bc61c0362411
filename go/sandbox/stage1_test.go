package sandbox_test

import (
	"testing"

	"github.com/clawpatrol/sandbox-host/go/sandbox"
)

func TestStage1OnlyRecordsThatItWasCalled(t *testing.T) {
	sandbox.ForgetStage1()
	sandbox.Stage1()
	if !sandbox.Stage1Called() {
		t.Error("Stage1 returned without recording that it was called")
	}
}
