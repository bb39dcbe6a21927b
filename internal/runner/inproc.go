package runner

import (
	"github.com/crystallize-dev/crystallize/internal/plan"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// InprocTools are the tools implemented in process that a front end binds
// for every run: plan.verify, which the workflows lowered from task plans
// call for their verify nodes, running commands in cfg's directory with
// environ (it still needs its capability granted). Binding it for every
// run means a plan's workflow can be run, checked and resumed like any
// other.
func InprocTools(cfg *runconfig.Config, environ []string) map[string]toolexec.Tool {
	return map[string]toolexec.Tool{
		plan.VerifyTool: {Func: plan.Verifier(cfg.Dir, environ), Capabilities: []string{plan.VerifyCapability}},
	}
}
