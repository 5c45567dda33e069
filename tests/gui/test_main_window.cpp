// The what-if window end to end (issue 7, "Done when"): the GPU count drives the results, an
// out-of-memory layout turns the memory bar red, a click on a Pareto point loads that plan; and
// undo, invalid input, the timeline, the search's Cancel, sessions and exports.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <cmath>
#include <fstream>
#include <sstream>

#include "gui/gantt_view.h"
#include "gui/input_panel.h"
#include "gui/main_window.h"
#include "gui/memory_bar.h"
#include "gui/pareto_chart.h"
#include "gui/plan_search.h"
#include "gui/plans_table_model.h"
#include "gui/results_panel.h"
#include "gui/session.h"
#include "planner/economics.h"
#include "planner/units_format.h"

namespace gpuplan {

class MainWindowTest : public QObject {
  Q_OBJECT

 private:
  HardwareDb db_;

  QSpinBox* Spin(MainWindow& w, const char* key) {
    auto* spin = qobject_cast<QSpinBox*>(w.inputs()->FieldWidget(key));
    Q_ASSERT(spin != nullptr);
    return spin;
  }

  // Pixels of the memory bar in its "does not fit" colour.
  static int OverCapacityPixels(MemoryBar* bar) {
    const QImage image = bar->grab().toImage();
    const QRgb red = MemoryBar::OverCapacityColor().rgb();
    int n = 0;
    for (int y = 0; y < image.height(); ++y) {
      for (int x = 0; x < image.width(); ++x) n += image.pixel(x, y) == red ? 1 : 0;
    }
    return n;
  }

  static std::string ReadFile(const QString& path) {
    std::ifstream in(path.toStdString());
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private slots:
  void initTestCase() {
    Expected<HardwareDb> db = LoadHardwareDb({});
    QVERIFY2(db.ok(), db.status().message().c_str());
    db_ = std::move(db).value();
  }

  void ChangingTheGpuCountUpdatesTheResults() {
    MainWindow w(db_, DefaultSession(db_));
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.current_plan() != nullptr);
    QCOMPARE(w.current_plan()->job.cluster.num_gpus, 256);
    const double step_256 = w.current_plan()->step.step_time_s;
    const double tokens_256 = w.current_plan()->step.tokens_per_s;
    const QString shown_256 = w.results()->MetricText(Metric::kStepTime);

    Spin(w, "gpus")->setValue(512);

    QVERIFY(w.current_plan() != nullptr);
    QCOMPARE(w.current_plan()->job.cluster.num_gpus, 512);
    QCOMPARE(w.current_plan()->job.parallel.dp, 16);  // 512 / (TP8 x PP4)
    QVERIFY(w.current_plan()->step.step_time_s < step_256);
    QVERIFY(w.current_plan()->step.tokens_per_s > 1.5 * tokens_256);
    QVERIFY(w.results()->MetricText(Metric::kStepTime) != shown_256);
    QVERIFY(w.results()->ErrorText().isEmpty());

    // One undo step brings the 256 GPUs back, with their numbers.
    w.undo_stack()->undo();
    QCOMPARE(Spin(w, "gpus")->value(), 256);
    QCOMPARE(w.current_plan()->step.step_time_s, step_256);
    QCOMPARE(w.results()->MetricText(Metric::kStepTime), shown_256);
  }

  void TheFrameworkChoiceSetsTheStack() {
    MainWindow w(db_, DefaultSession(db_));
    w.show();
    auto* box = qobject_cast<QComboBox*>(w.inputs()->FieldWidget("framework"));
    QVERIFY(box != nullptr);
    QCOMPARE(box->currentData().toString(), QStringLiteral("megatron-core"));
    const int row = box->findData(QStringLiteral("nanotron"));
    QVERIFY(row >= 0);
    box->setCurrentIndex(row);
    emit box->activated(row);
    QVERIFY(w.current_plan() != nullptr);
    QCOMPARE(QString::fromStdString(w.current_plan()->job.training.framework.id),
             QStringLiteral("nanotron"));
  }

  void TimeAndCostCarryTheirErrorBand() {
    MainWindow w(db_, DefaultSession(db_));
    w.show();
    QVERIFY(w.current_plan() != nullptr);
    const ErrorBand& band = w.current_plan()->band;
    QVERIFY(band.runs > 0);
    QVERIFY(band.low_factor < band.high_factor);
    const QString time = w.results()->MetricDetail(Metric::kTimeToTrain);
    QVERIFY2(time.contains(QStringLiteral("80% band ")), qPrintable(time));
    const double wall = w.current_plan()->econ.expected_wall_s;
    QVERIFY2(time.contains(QString::fromStdString(FormatDuration(wall * band.high_factor))),
             qPrintable(time));
    const QString cost = w.results()->MetricDetail(Metric::kCostToTrain);
    QVERIFY2(cost.contains(QStringLiteral("80% band $")), qPrintable(cost));
  }

  void AnOutOfMemoryLayoutTurnsTheMemoryBarRed() {
    MainWindow w(db_, DefaultSession(db_));
    w.resize(1400, 900);
    w.show();
    MemoryBar* bar = w.results()->memory_bar();
    QVERIFY(!bar->OverCapacity());
    QCOMPARE(OverCapacityPixels(bar), 0);

    // Llama 3 70B without tensor or pipeline parallelism: 140 GB of bf16 weights per GPU.
    Spin(w, "tp")->setValue(1);
    Spin(w, "pp")->setValue(1);
    Spin(w, "vpp")->setValue(1);
    QVERIFY(w.current_plan() != nullptr);
    QVERIFY(!w.current_plan()->step.memory.fits);
    QVERIFY(bar->OverCapacity());
    QVERIFY(OverCapacityPixels(bar) > 100);

    w.undo_stack()->undo();
    w.undo_stack()->undo();
    w.undo_stack()->undo();
    QVERIFY(w.current_plan()->step.memory.fits);
    QVERIFY(!bar->OverCapacity());
    QCOMPARE(OverCapacityPixels(bar), 0);
  }

  void ClickingAParetoPointLoadsThatPlan() {
    Session s = DefaultSession(db_);
    s.search_all_gpus = false;  // H100 only, up to 512 GPUs: a short search
    s.search_max_gpus = 512;
    MainWindow w(db_, s);
    w.resize(1600, 1000);
    w.show();
    w.FindBestPlan();
    QVERIFY(w.Searching());
    QTRY_VERIFY_WITH_TIMEOUT(!w.Searching(), 120000);
    const PlanResult* result = w.results()->search();
    QVERIFY(result != nullptr);
    QVERIFY(result->pareto.size() >= 2);
    ParetoChart* chart = w.results()->pareto_chart();
    QCOMPARE(chart->PointCount(), static_cast<int>(result->pareto.size()));

    // The point furthest from the current 256 GPUs, in octaves.
    const auto octaves_from_256 = [&](int k) {
      const double gpus =
          static_cast<double>(result->pareto[static_cast<size_t>(k)].job.cluster.num_gpus);
      return std::abs(std::log2(gpus) - 8.0);
    };
    int pick = 0;
    for (int i = 0; i < chart->PointCount(); ++i) {
      if (octaves_from_256(i) > octaves_from_256(pick)) pick = i;
    }
    const Plan expected = result->pareto[static_cast<size_t>(pick)];
    QSignalSpy clicked(chart, &ParetoChart::PlanClicked);
    QTest::mouseClick(chart, Qt::LeftButton, Qt::NoModifier, chart->PointPosition(pick).toPoint());
    QCOMPARE(clicked.count(), 1);

    const Session& now = w.inputs()->session();
    QCOMPARE(now.job.cluster.num_gpus, expected.job.cluster.num_gpus);
    QCOMPARE(now.job.parallel.tp, expected.job.parallel.tp);
    QCOMPARE(now.job.parallel.pp, expected.job.parallel.pp);
    QCOMPARE(now.job.parallel.cp, expected.job.parallel.cp);
    QCOMPARE(now.job.training.micro_batch_size, expected.job.training.micro_batch_size);
    QCOMPARE(Spin(w, "gpus")->value(), static_cast<int>(expected.job.cluster.num_gpus));
    const Plan* plan = w.current_plan();
    QVERIFY(plan != nullptr);
    // The window shows the analytic model; the planner may have re-timed a finalist with the
    // event simulator and kept the analytic time beside it.
    const double analytic =
        expected.analytic_step_s > 0 ? expected.analytic_step_s : expected.step.step_time_s;
    QVERIFY(std::abs(plan->step.step_time_s / analytic - 1) < 1e-9);
    QCOMPARE(plan->econ.provider, expected.econ.provider);
    QCOMPARE(plan->step.memory.peak_bytes, expected.step.memory.peak_bytes);
    // Loading is one undoable edit.
    w.undo_stack()->undo();
    QCOMPARE(w.inputs()->session().job.cluster.num_gpus, 256);

    // The Plans table sorts by any column, numbers as numbers.
    QTableView* table = w.results()->plans_table();
    QAbstractItemModel* model = table->model();
    QVERIFY(model->rowCount() >= 2);
    const int gpus_column = 2, cost_column = 8;
    QCOMPARE(model->headerData(gpus_column, Qt::Horizontal).toString(), QStringLiteral("GPUs"));
    QCOMPARE(model->headerData(cost_column, Qt::Horizontal).toString(), QStringLiteral("cost"));
    for (const int column : {gpus_column, cost_column}) {
      table->sortByColumn(column, Qt::AscendingOrder);
      for (int row = 1; row < model->rowCount(); ++row) {
        QVERIFY(model->index(row - 1, column).data(PlansTableModel::kSortRole).toDouble() <=
                model->index(row, column).data(PlansTableModel::kSortRole).toDouble());
      }
    }
  }

  void ASearchForAnotherJobIsDropped() {
    Session s = DefaultSession(db_);
    s.search_all_gpus = false;
    s.search_max_gpus = 256;
    MainWindow w(db_, s);
    w.FindBestPlan();
    QTRY_VERIFY_WITH_TIMEOUT(!w.Searching(), 120000);
    QVERIFY(w.results()->search() != nullptr);
    // Hardware and layout are what the search explores: its answer still holds.
    Spin(w, "gpus")->setValue(128);
    QVERIFY(w.results()->search() != nullptr);
    QVERIFY(w.results()->pareto_chart()->PointCount() > 0);
    // Another model is another question.
    Spin(w, "layers")->setValue(40);
    QVERIFY(w.results()->search() == nullptr);
    QCOMPARE(w.results()->pareto_chart()->PointCount(), 0);
  }

  void AMeasuredProfileReplacesTheDatasheetRates() {
    MainWindow w(db_, DefaultSession(db_));
    const double datasheet = w.current_plan()->step.step_time_s;
    QCOMPARE(w.RatesText(), QStringLiteral("rates: datasheet"));
    // Published H100 SXM GEMM measurements assembled as a profile (tests/data/profile).
    Status st = w.UseProfile(GPUPLAN_TEST_DATA "/profile/published-h100-sxm.json");
    QVERIFY2(st.ok(), st.message().c_str());
    QVERIFY(w.RatesText().contains("measured profile published-h100-sxm.json"));
    const double profiled = w.current_plan()->step.step_time_s;
    QVERIFY(std::abs(profiled / datasheet - 1) > 1e-3);
    // Another GPU type keeps its datasheet figures, and says so.
    Session a100 = w.inputs()->session();
    QVERIFY(SelectGpu(db_, "a100-sxm4-80gb", &a100).ok());
    w.inputs()->Edit(a100, "A100");
    QVERIFY(w.RatesText().contains("datasheet (the profile measured h100-sxm5-80gb)"));
    w.undo_stack()->undo();
    QCOMPARE(w.current_plan()->step.step_time_s, profiled);
    w.UseDatasheet();
    QCOMPARE(w.current_plan()->step.step_time_s, datasheet);
    // A file that is not a profile: the error names it, the rates stay.
    st = w.UseProfile(GPUPLAN_TEST_DATA "/gui/wrong_node_session.json");
    QVERIFY(!st.ok());
    QVERIFY2(QString::fromStdString(st.message()).contains("wrong_node_session.json"),
             st.message().c_str());
    QCOMPARE(w.RatesText(), QStringLiteral("rates: datasheet"));
  }

  void AHuggingFaceConfigBecomesTheModel() {
    MainWindow w(db_, DefaultSession(db_));
    const QString config = GPUPLAN_TEST_DATA "/model/llama3-8b/config.json";
    Status st = w.inputs()->LoadHfConfig(config);
    QVERIFY2(st.ok(), st.message().c_str());
    const Session& s = w.inputs()->session();
    QCOMPARE(s.model_source, ModelSource::kHfConfig);
    QCOMPARE(s.job.model.hidden_size, 4096);
    QCOMPARE(s.job.model.num_layers, 32);
    // 32 layers do not split into PP4 x VPP5 = 20 chunks; VPP2 makes it 4 x 2 x 4 layers.
    QVERIFY(w.current_plan() == nullptr);
    QVERIFY2(w.results()->ErrorText().contains("layers"), qPrintable(w.results()->ErrorText()));
    Spin(w, "vpp")->setValue(2);
    QVERIFY(w.current_plan() != nullptr);
    QCOMPARE(w.current_plan()->job.model.hidden_size, 4096);
    w.undo_stack()->undo();
    w.undo_stack()->undo();
    QCOMPARE(w.inputs()->session().job.model.num_layers, 80);
    st = w.inputs()->LoadHfConfig(GPUPLAN_TEST_DATA "/gui/wrong_node_session.json");
    QVERIFY(!st.ok());
    QVERIFY(QString::fromStdString(st.message()).contains("wrong_node_session.json"));
    QCOMPARE(w.inputs()->session().job.model.num_layers, 80);
  }

  void EditsOfOneFieldMergeIntoOneUndoStep() {
    MainWindow w(db_, DefaultSession(db_));
    QSpinBox* gpus = Spin(w, "gpus");
    gpus->setValue(128);
    gpus->setValue(512);
    gpus->setValue(1024);
    Spin(w, "micro_batch")->setValue(2);
    QCOMPARE(w.undo_stack()->count(), 2);
    w.undo_stack()->undo();
    QCOMPARE(w.inputs()->session().job.training.micro_batch_size, 1);
    QCOMPARE(gpus->value(), 1024);
    w.undo_stack()->undo();
    QCOMPARE(gpus->value(), 256);
    w.undo_stack()->redo();
    QCOMPARE(gpus->value(), 1024);
  }

  // Token counts read as the CLI prints them and are typed as it takes them.
  void TokenCountsReadAndTypeAsInTheCli() {
    MainWindow w(db_, DefaultSession(db_));
    auto* tokens = qobject_cast<QDoubleSpinBox*>(w.inputs()->FieldWidget("tokens"));
    QVERIFY(tokens != nullptr);
    QCOMPARE(tokens->text(), QStringLiteral("1.00T tokens"));
    tokens->selectAll();
    QTest::keyClicks(tokens, "15.6T");
    QTest::keyClick(tokens, Qt::Key_Return);
    QCOMPARE(w.inputs()->session().train_tokens, 15.6e12);
    QCOMPARE(tokens->text(), QStringLiteral("15.6T tokens"));
    tokens->stepBy(1);  // the last digit shown
    QCOMPARE(w.inputs()->session().train_tokens, 15.7e12);
    tokens->selectAll();
    QTest::keyClicks(tokens, "500B");
    QTest::keyClick(tokens, Qt::Key_Return);
    QCOMPARE(tokens->text(), QStringLiteral("500B tokens"));
    QCOMPARE(w.inputs()->session().train_tokens, 500e9);
  }

  void InvalidInputShowsWhichFieldAndWhy() {
    MainWindow w(db_, DefaultSession(db_));
    Spin(w, "tp")->setValue(3);  // 256 GPUs are not a multiple of 3 x 4
    QVERIFY(w.current_plan() == nullptr);
    QVERIFY(w.results()->ErrorText().contains("TP x PP x CP"));
    QCOMPARE(w.results()->MetricText(Metric::kStepTime), QStringLiteral("–"));
    Spin(w, "gpus")->setValue(192);  // 16 x TP3 x PP4, but 64 heads are not divisible by 3
    QVERIFY(w.current_plan() == nullptr);
    QVERIFY2(w.results()->ErrorText().contains("tp"), qPrintable(w.results()->ErrorText()));
    Spin(w, "tp")->setValue(4);  // DP 12: 512 sequences do not split into 12 replicas
    QVERIFY(w.current_plan() == nullptr);
    QVERIFY2(w.results()->ErrorText().contains("global_batch"),
             qPrintable(w.results()->ErrorText()));
    Spin(w, "gpus")->setValue(256);  // TP4 PP4 DP16
    QVERIFY(w.current_plan() != nullptr);
    QCOMPARE(w.current_plan()->job.parallel.dp, 16);
    QVERIFY(w.results()->ErrorText().isEmpty());
  }

  void TheTimelineArrivesInTheBackground() {
    MainWindow w(db_, DefaultSession(db_));
    w.show();
    QTRY_VERIFY_WITH_TIMEOUT(!w.TimelinePending(), 60000);
    // PP4: one simulated GPU per stage, each with a compute row and communication rows.
    QVERIFY(w.results()->gantt_view()->RowCount() >= 4);
    // A newer change supersedes the old simulation.
    Spin(w, "pp")->setValue(2);
    Spin(w, "vpp")->setValue(1);
    QVERIFY(w.TimelinePending());
    QTRY_VERIFY_WITH_TIMEOUT(!w.TimelinePending(), 60000);
    QVERIFY(w.results()->gantt_view()->RowCount() >= 2);
  }

  void CancelEndsTheSearch() {
    MainWindow w(db_, DefaultSession(db_));
    PlanSearch* search = w.findChild<PlanSearch*>();
    QVERIFY(search != nullptr);
    QSignalSpy cancelled(search, &PlanSearch::Cancelled);
    QSignalSpy finished(search, &PlanSearch::Finished);
    w.FindBestPlan();
    search->Cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!w.Searching(), 60000);
    // The search stops at the next hardware point; a tiny search may finish first.
    QCOMPARE(cancelled.count() + finished.count(), 1);
  }

  void SessionsRoundTripAndExportsWriteFiles() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    MainWindow w(db_, DefaultSession(db_));
    Spin(w, "gpus")->setValue(128);
    const QString session = dir.filePath("s.json");
    Status st = w.SaveSession(session);
    QVERIFY2(st.ok(), st.message().c_str());

    MainWindow other(db_, DefaultSession(db_));
    st = other.OpenSession(session);
    QVERIFY2(st.ok(), st.message().c_str());
    QCOMPARE(other.inputs()->session().job.cluster.num_gpus, 128);
    QCOMPARE(other.current_plan()->step.step_time_s, w.current_plan()->step.step_time_s);

    st = w.ExportReport(dir.filePath("plan.html"));
    QVERIFY2(st.ok(), st.message().c_str());
    QVERIFY(ReadFile(dir.filePath("plan.html")).find("<svg") != std::string::npos);
    st = w.ExportReport(dir.filePath("plan.md"));
    QVERIFY2(st.ok(), st.message().c_str());
    QVERIFY(ReadFile(dir.filePath("plan.md")).find("# ") != std::string::npos);
    st = w.ExportLaunchConfig(dir.filePath("train.sh"), "megatron");
    QVERIFY2(st.ok(), st.message().c_str());
    QVERIFY(ReadFile(dir.filePath("train.sh")).find("--tensor-model-parallel-size 8") !=
            std::string::npos);
    st = w.ExportLaunchConfig(dir.filePath("train.sbatch"), "megatron", Launcher::kSlurm);
    QVERIFY2(st.ok(), st.message().c_str());
    QVERIFY(ReadFile(dir.filePath("train.sbatch")).find("\n#SBATCH --nodes=16\n") !=
            std::string::npos);
    st = w.ExportLaunchConfig(dir.filePath("accelerate.sbatch"), "accelerate", Launcher::kSlurm);
    QVERIFY(!st.ok());
    QVERIFY(!QFile::exists(dir.filePath("accelerate.sbatch")));
    st = w.ExportPlanJson(dir.filePath("plan.json"));
    QVERIFY2(st.ok(), st.message().c_str());

    // Invalid inputs: nothing is saved or exported, and the error says why.
    Spin(w, "tp")->setValue(3);
    st = w.SaveSession(dir.filePath("bad.json"));
    QVERIFY(!st.ok());
    QVERIFY(!QFile::exists(dir.filePath("bad.json")));
    QVERIFY(!w.ExportPlanJson(dir.filePath("bad-plan.json")).ok());
    QVERIFY(!QFile::exists(dir.filePath("bad-plan.json")));
    st = w.OpenSession(dir.filePath("missing.json"));
    QVERIFY(!st.ok());
    QVERIFY(QString::fromStdString(st.message()).contains("missing.json"));
  }
};

}  // namespace gpuplan

QTEST_MAIN(gpuplan::MainWindowTest)
#include "test_main_window.moc"
