// libfhook: everything.
#pragma once

#include <fhook/cpulist.hpp>
#include <fhook/device.hpp>
#include <fhook/error.hpp>
#include <fhook/event.hpp>
#include <fhook/fd.hpp>
#include <fhook/format.hpp>
#include <fhook/functions.hpp>
#include <fhook/ksyms.hpp>
#include <fhook/output.hpp>
#include <fhook/ring.hpp>
#include <fhook/session.hpp>
#include <fhook/spec.hpp>
#include <fhook/summary.hpp>
