package server_test

import "os"

var os_ErrDeadlineExceeded = os.ErrDeadlineExceeded
