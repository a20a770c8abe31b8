// warden: a durable job queue. Include this one header.
#pragma once

#include "warden/backlog.h"
#include "warden/client.h"
#include "warden/db_url.h"
#include "warden/flow.h"
#include "warden/json_view.h"
#include "warden/job.h"
#include "warden/log.h"
#include "warden/nodes.h"
#include "warden/status.h"
#include "warden/worker.h"
