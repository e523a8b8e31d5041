#include <toml++/toml.h>

#include <map>
#include <set>
#include <sstream>

#include <fhook/core/error.hpp>
#include <fhook/engine/export.hpp>
#include <fhook/engine/module_hist.hpp>

namespace fhook {

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& what) {
    throw_invalid(where + ": " + what);
}

std::vector<std::string> strings(const toml::table& t, const std::string& key,
                                 const std::string& where) {
    const toml::array* a = t[key].as_array();
    if (!a || a->empty()) {
        bad(where, "'" + key + "' must be a list of strings, e.g. " + key + " = [\"vfs_read\"]");
    }
    std::vector<std::string> out;
    for (const auto& v : *a) {
        const auto* s = v.as_string();
        if (!s || s->get().empty()) {
            bad(where,
                "'" + key + "' must be a list of strings, e.g. " + key + " = [\"vfs_read\"]");
        }
        out.push_back(s->get());
    }
    return out;
}

// The keys `t` may have; anything else is a mistake worth a line.
void only(const toml::table& t, std::set<std::string> keys, const std::string& where) {
    for (const auto& [k, v] : t) {
        if (!keys.count(std::string(k.str()))) {
            bad(where, "unknown key '" + std::string(k.str()) + "'");
        }
    }
}

ExportJob job_of(const toml::table& t, const std::string& kind, const std::string& where) {
    ExportJob job;
    const auto* name = t["name"].as_string();
    if (!name || name->get().empty()) {
        bad(where, "every job needs a name = \"...\" (the metrics' job label)");
    }
    job.name = name->get();
    if (const auto* f = t["filter"].as_string()) {
        job.spec.filter = f->get();
    } else if (t.contains("filter")) {
        bad(where, "'filter' must be a string (a filter expression: docs/probes.md)");
    }
    if (kind == "hist") {
        only(t, {"name", "probe", "triggers", "filter"}, where);
        const auto* probe = t["probe"].as_string();
        if (!probe || probe->get().empty()) {
            bad(where, "a hist job needs probe = \"...\" (a function or a probe definition)");
        }
        job.spec.collect = Collect::Events;
        job.spec.probes = {probe->get()};
        try {
            for (const std::string& trigger : strings(t, "triggers", where)) {
                job.hist.push_back(parse_hist_trigger(trigger));
            }
        } catch (const Error& e) {
            bad(where, e.what());
        }
        // (their shared 'if' the probe's filter: the module keeps the tables)
        const std::optional<std::string> filter = hist_probe_filter(job.hist, job.spec.filter);
        if (!filter) {
            bad(where, "the triggers of a hist job must share their 'if' (the module keeps "
                       "their tables)");
        }
        job.spec.filter = *filter;
    } else if (kind == "count" || kind == "latency") {
        only(t, {"name", "functions", "filter"}, where);
        job.spec.collect = kind == "count" ? Collect::Counts : Collect::Latency;
        job.spec.probes = strings(t, "functions", where);
    } else {
        only(t, {"name", "class"}, where);
        job.spec.collect = Collect::Wakeup;
        const std::string cls = t["class"].value_or(std::string("normal"));
        if (cls != "normal" && cls != "rt" && cls != "dl") {
            bad(where, "class must be \"normal\", \"rt\" or \"dl\", not \"" + cls + "\"");
        }
        job.spec.wakeup.wclass = cls == "rt"   ? std::uint32_t{FHOOK_WAKEUP_RT}
                                 : cls == "dl" ? std::uint32_t{FHOOK_WAKEUP_DL}
                                               : std::uint32_t{FHOOK_WAKEUP_ALL};
        job.spec.wakeup.reports = false;
    }
    std::ostringstream key;
    key << kind << "\n" << t;
    job.key = key.str();
    return job;
}

// `families` with {"fhook_job", name} first in each series' labels, into `into`
// (a family per name: the first one's HELP and TYPE)
void merge(std::vector<MetricFamily>& into, std::map<std::string, std::size_t>& at,
           std::vector<MetricFamily> families, const std::string& name) {
    for (MetricFamily& f : families) {
        for (MetricSeries& s : f.series) {
            s.labels.insert(s.labels.begin(), {"fhook_job", name});
        }
        const auto [it, fresh] = at.emplace(f.name, into.size());
        if (fresh) {
            into.push_back(std::move(f));
        } else {
            auto& series = into[it->second].series;
            series.insert(series.end(), std::make_move_iterator(f.series.begin()),
                          std::make_move_iterator(f.series.end()));
        }
    }
}

} // namespace

ExportConfig parse_export_config(std::string_view text, const std::string& origin) {
    toml::table doc;
    try {
        doc = toml::parse(text, origin);
    } catch (const toml::parse_error& e) {
        const auto& at = e.source().begin;
        throw_invalid(origin + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) +
                      ": " + std::string(e.description()));
    }
    ExportConfig config;
    only(doc, {"listen", "series_limit", "pid_labels", "count", "latency", "wakeup", "hist"},
         origin);
    if (doc.contains("listen")) {
        const auto* l = doc["listen"].as_string();
        if (!l) {
            bad(origin, "listen must be a string, e.g. listen = \"127.0.0.1:9110\"");
        }
        config.listen = l->get();
    }
    if (doc.contains("series_limit")) {
        const auto n = doc["series_limit"].value<std::int64_t>();
        if (!n || *n < 2) {
            bad(origin, "series_limit must be a number of at least 2");
        }
        config.metrics.series_limit = static_cast<std::size_t>(*n);
    }
    if (doc.contains("pid_labels")) {
        const auto b = doc["pid_labels"].value<bool>();
        if (!b) {
            bad(origin, "pid_labels must be true or false");
        }
        config.metrics.pid_labels = *b;
    }
    std::set<std::string> names;
    for (const char* kind : {"count", "latency", "wakeup", "hist"}) {
        if (!doc.contains(kind)) {
            continue;
        }
        const toml::array* tables = doc[kind].as_array();
        if (!tables) {
            bad(origin, std::string("'") + kind + "' must be a list of tables: [[" + kind + "]]");
        }
        for (std::size_t i = 0; i < tables->size(); i++) {
            const std::string where = origin + ": [[" + kind + "]] #" + std::to_string(i + 1);
            const toml::table* t = (*tables)[i].as_table();
            if (!t) {
                bad(where, "not a table");
            }
            ExportJob job = job_of(*t, kind, where);
            if (!names.insert(job.name).second) {
                bad(where, "a second job named '" + job.name + "'");
            }
            config.jobs.push_back(std::move(job));
        }
    }
    if (config.jobs.empty()) {
        bad(origin, "no job: give at least one [[count]], [[latency]], [[wakeup]] or [[hist]] "
                    "table");
    }
    return config;
}

struct Exporter::Running {
    ExportJob job;
    std::unique_ptr<Tracer> tracer;
    std::vector<ModuleHist> hists; // [[hist]]: its tables (on *tracer)
    std::unique_ptr<MetricsCollector> collector;
};

Exporter::Exporter(SystemPaths paths) : paths_(std::move(paths)) {}

Exporter::~Exporter() = default;

Exporter::Change Exporter::apply(const ExportConfig& config) {
    // (scrapes wait while jobs are armed: they read jobs_)
    const std::lock_guard lock(mutex_);
    Change change;
    std::vector<std::unique_ptr<Running>> next;
    std::map<std::string, std::unique_ptr<Running>*> old;
    for (auto& r : jobs_) {
        old[r->job.key] = &r;
    }
    for (const ExportJob& job : config.jobs) {
        if (const auto it = old.find(job.key); it != old.end() && *it->second) {
            next.push_back(std::move(*it->second));
            next.back()->job.name = job.name;
            change.kept.push_back(job.name);
            continue;
        }
        auto r = std::make_unique<Running>();
        r->job = job;
        try {
            r->tracer = std::make_unique<Tracer>(job.spec, paths_);
            r->tracer->setup();
            if (!job.hist.empty()) {
                const KprobeDef* def =
                    r->tracer->probe_table().find(r->tracer->probes().front().id);
                r->hists = keep_hists_in_module(*r->tracer, job.hist,
                                                !def || def->filter == job.spec.filter);
                if (r->hists.empty()) {
                    throw_invalid("the module cannot keep these triggers' tables (keys of "
                                  "numbers, the task, stacks; up to " +
                                  std::to_string(FHOOK_HIST_MAX_TABLES) + " tables)");
                }
            }
            r->tracer->start();
        } catch (const Error& e) {
            // (what `next` took back goes where it was: the old jobs stay)
            for (auto& n : next) {
                if (const auto o = old.find(n->job.key); o != old.end() && !*o->second) {
                    *o->second = std::move(n);
                }
            }
            throw Error(e.kind(), "job '" + job.name + "': " + e.what(), e.sys_errno());
        }
        MetricsOptions opt = config.metrics;
        opt.tracer = wakeup_tracer_name(job.spec.wakeup.wclass);
        r->collector = std::make_unique<MetricsCollector>(*r->tracer, job.spec.collect, opt);
        if (!r->hists.empty()) {
            r->collector->set_hist([hists = &r->hists] {
                std::vector<HistTable> tables;
                for (const ModuleHist& h : *hists) {
                    tables.push_back(h.total());
                }
                return tables;
            });
        }
        r->collector->ready();
        change.armed.push_back(job.name);
        next.push_back(std::move(r));
    }
    for (auto& r : jobs_) {
        if (r) {
            change.dropped.push_back(r->job.name);
        }
    }
    jobs_ = std::move(next); // (the dropped jobs' tracers detach here)
    return change;
}

std::string Exporter::prometheus_text() {
    const std::lock_guard lock(mutex_);
    std::vector<MetricFamily> families;
    std::map<std::string, std::size_t> at;
    for (const auto& r : jobs_) {
        merge(families, at, r->collector->collect(), r->job.name);
    }
    return fhook::prometheus_text(families);
}

} // namespace fhook
