// The left side of the window: every input of a Session as a form (model, job, hardware,
// parallelism, price, search), each with a tooltip; every edit is one undoable command.
#pragma once

#include <QString>
#include <QWidget>
#include <vector>

#include "gui/session.h"
#include "hardware-db/hardware_db.h"

class QFormLayout;
class QLabel;
class QUndoStack;

namespace gpuplan {

class InputPanel : public QWidget {
  Q_OBJECT

 public:
  struct Field;  ///< one row of the form (input_panel.cpp's table)

  /// `db` and `undo` must outlive the panel. The panel starts showing `initial`.
  InputPanel(const HardwareDb& db, QUndoStack* undo, const Session& initial,
             QWidget* parent = nullptr);
  ~InputPanel() override;

  /// The inputs as the form shows them.
  const Session& session() const { return session_; }

  /// Replaces all inputs as one undoable edit called `what` (loading a plan, opening a file).
  void Edit(const Session& next, const QString& what);

  /// Reads a Hugging Face config.json (simulator/hf_config.h) as the model, one undoable edit.
  /// Errors name the file and field; the inputs stay as they were then.
  Status LoadHfConfig(const QString& path);

  /// Shows `session` without an undo entry and emits SessionChanged (undo/redo use it).
  void ShowSession(const Session& session);

  /// The widget of the input called `key` (the keys of the field table in input_panel.cpp, e.g.
  /// "gpus", "tp", "gpu", "preset"), for tests and benchmarks; nullptr when unknown.
  QWidget* FieldWidget(const QString& key) const;

 signals:
  /// The session changed (an edit, an undo or a redo).
  void SessionChanged();

 private:
  void Build();
  QWidget* AddField(QFormLayout* form, const Field& field);
  void Commit(Session next, int field_index);
  void Refresh();
  void RefreshChoices();
  void OpenHfConfig();

  const HardwareDb& db_;
  QUndoStack* undo_;
  Session session_;
  std::vector<QWidget*> widgets_;  // parallel to the field table
  QLabel* model_summary_ = nullptr;
  QLabel* dp_label_ = nullptr;
  QLabel* gpu_summary_ = nullptr;
};

}  // namespace gpuplan
