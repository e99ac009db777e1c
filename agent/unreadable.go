package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// explainUnreadable adds to err, when file could not be read for want of
// permission, whom the agent runs as and how to let it read the file: the
// agent's image runs as uid 65532, and a kubeconfig copied out of a
// container (docker cp) keeps its mode 0600 and takes its copier's uid.
func explainUnreadable(flag, file string, err error) error {
	if !errors.Is(err, fs.ErrPermission) {
		// clientcmd keeps only the text of the error it read the file with.
		f, openErr := os.Open(file)
		if openErr == nil {
			f.Close()
			return err
		}
		if !errors.Is(openErr, fs.ErrPermission) {
			return err
		}
	}
	mode := ""
	if st, statErr := os.Stat(file); statErr == nil {
		mode = fmt.Sprintf(" (mode %04o)", st.Mode().Perm())
	}
	return fmt.Errorf("%w\nThe agent runs as uid %d, which may not read %s %s%s. Make it readable by that user: "+
		"in a container, run it as the file's owner (docker run --user \"$(id -u):$(id -g)\" for a file of yours mounted with -v), "+
		"or copy the file in owned by uid %d; on a machine, chown or chmod it", err, os.Getuid(), flag, file, mode, os.Getuid())
}
